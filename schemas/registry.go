// Package schemas reads and writes record values kept in a schema
// registry's formats: Avro, Protobuf and JSON Schema values in the Confluent
// wire format (a zero magic byte, the 4-byte id of the writer's schema, for
// Protobuf the message indexes, then the encoded value).
//
// A Decoder turns such a value into the JSON or msgpack a function reads,
// with the schema its writer used (looked up by id, so records written
// with older and newer versions of a subject's schema both decode); an
// Encoder turns a function's JSON or msgpack output into a sink subject's
// schema, refusing what does not fit it. Registry talks to any
// Confluent-compatible schema registry (franz-go's pkg/sr client) and
// keeps the schemas it has parsed.
package schemas

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// Errors a Registry's lookups wrap.
var (
	// ErrUnknownSchema: the registry has no such schema (or subject); a
	// record naming it can never be read.
	ErrUnknownSchema = errors.New("unknown schema")
	// ErrUnavailable: the registry could not be asked (unreachable,
	// timed out, a server error); asking again later may work.
	ErrUnavailable = errors.New("schema registry unavailable")
	// ErrBadSchema: the registry's schema cannot be used (it does not
	// parse, or uses what this package does not support).
	ErrBadSchema = errors.New("unusable schema")
)

// Bounds on what a registry sends.
const (
	// MaxResponse bounds a registry response's body; a schema is text of
	// a few kilobytes, rarely more than a few hundred.
	MaxResponse = 4 << 20
	// unknownFor is how long an id the registry said it does not know
	// is answered from memory before the registry is asked again.
	unknownFor = time.Minute
	// maxReferences bounds the schemas one schema's references bring in.
	maxReferences = 64
)

// Format is a registry value format.
type Format string

// The registry formats.
const (
	Avro       Format = "avro"
	Protobuf   Format = "protobuf"
	JSONSchema Format = "json_schema"
)

// Formats are the registry formats, in the order docs list them.
var Formats = []Format{Avro, Protobuf, JSONSchema}

// IsFormat says whether f names a registry format.
func IsFormat(f string) bool {
	for _, x := range Formats {
		if string(x) == f {
			return true
		}
	}
	return false
}

func (f Format) srType() sr.SchemaType {
	switch f {
	case Protobuf:
		return sr.TypeProtobuf
	case JSONSchema:
		return sr.TypeJSON
	}
	return sr.TypeAvro
}

func formatOf(t sr.SchemaType) Format {
	switch t {
	case sr.TypeProtobuf:
		return Protobuf
	case sr.TypeJSON:
		return JSONSchema
	}
	return Avro
}

// Schema is a registry schema, parsed.
type Schema struct {
	ID      int
	Subject string // for a subject's schema (Latest, Register); else ""
	Version int
	Format  Format
	Text    string

	avro  *avroSchema
	proto *protoSchema
	json  *jsonSchema
}

// Registry is a client of one schema registry that keeps the schemas it
// has read by id (a schema id never changes meaning). Safe for concurrent
// use; lookups run without its lock held.
type Registry struct {
	url string
	cl  *sr.Client

	mu      sync.Mutex
	byID    map[int]*Schema
	unknown map[int]time.Time // ids the registry said it does not know, and when
}

// Options configure a Registry.
type Options struct {
	// Timeout bounds one request (default 5 s).
	Timeout time.Duration
	// BasicAuth is "user:password" for registries that ask for it.
	BasicAuth string
}

// NewRegistry returns a client of the registry at url (http or https).
func NewRegistry(url string, o Options) (*Registry, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("schema registry %q: want an http:// or https:// URL", url)
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	opts := []sr.ClientOpt{
		sr.URLs(url),
		sr.HTTPClient(&http.Client{Timeout: o.Timeout, Transport: boundedTransport{http.DefaultTransport}}),
		sr.UserAgent("eddy"),
	}
	if o.BasicAuth != "" {
		user, pass, _ := strings.Cut(o.BasicAuth, ":")
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %w", url, err)
	}
	return &Registry{url: url, cl: cl, byID: map[int]*Schema{}, unknown: map[int]time.Time{}}, nil
}

// URL is the registry's address.
func (r *Registry) URL() string { return r.url }

// Ping asks the registry for its global compatibility level (GET /config,
// a small answer every registry gives): an error wrapping ErrUnavailable
// when it cannot be reached.
func (r *Registry) Ping(ctx context.Context) error {
	res := r.cl.Compatibility(ctx)
	if len(res) == 0 {
		return nil
	}
	return r.classify(res[0].Err, "asking for its compatibility level")
}

// ByID returns the schema with id, from memory or the registry.
func (r *Registry) ByID(ctx context.Context, id int) (*Schema, error) {
	r.mu.Lock()
	s, ok := r.byID[id]
	at, unknown := r.unknown[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	if unknown && time.Since(at) < unknownFor {
		return nil, fmt.Errorf("schema id %d: %w", id, ErrUnknownSchema)
	}
	got, err := r.cl.SchemaByID(ctx, id)
	if err != nil {
		err = r.classify(err, fmt.Sprintf("reading schema id %d", id))
		if errors.Is(err, ErrUnknownSchema) {
			r.mu.Lock()
			if len(r.unknown) > 10_000 {
				clear(r.unknown)
			}
			r.unknown[id] = time.Now()
			r.mu.Unlock()
		}
		return nil, err
	}
	s, err = r.parse(ctx, id, "", 0, got)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.byID[id] = s
	delete(r.unknown, id)
	r.mu.Unlock()
	return s, nil
}

// Latest returns subject's latest schema.
func (r *Registry) Latest(ctx context.Context, subject string) (*Schema, error) {
	got, err := r.cl.SchemaByVersion(ctx, subject, -1)
	if err != nil {
		return nil, r.classify(err, fmt.Sprintf("reading subject %q", subject))
	}
	return r.parse(ctx, got.ID, subject, got.Version, got.Schema)
}

// Register registers text, a schema of format f, under subject (the
// registry checks it against the subject's compatibility rule and refuses
// an incompatible one) and returns it, parsed; registering a schema the
// subject already has returns that one.
func (r *Registry) Register(ctx context.Context, subject string, f Format, text string) (*Schema, error) {
	s := sr.Schema{Schema: text, Type: f.srType()}
	if _, err := parse(f, text, nil); err != nil {
		return nil, err
	}
	got, err := r.cl.CreateSchema(ctx, subject, s)
	if err != nil {
		return nil, r.classify(err, fmt.Sprintf("registering a schema under subject %q", subject))
	}
	return r.parse(ctx, got.ID, subject, got.Version, got.Schema)
}

// parse parses a registry schema, fetching the schemas it references.
func (r *Registry) parse(ctx context.Context, id int, subject string, version int, s sr.Schema) (*Schema, error) {
	refs := map[string]string{}
	if err := r.references(ctx, s.References, refs, 0); err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	out, err := parse(formatOf(s.Type), s.Schema, refs)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	out.ID, out.Subject, out.Version = id, subject, version
	return out, nil
}

// references puts the text of every schema refs name (and theirs) in
// out, by reference name.
func (r *Registry) references(ctx context.Context, refs []sr.SchemaReference, out map[string]string, depth int) error {
	for _, ref := range refs {
		if _, ok := out[ref.Name]; ok {
			continue
		}
		if len(out) >= maxReferences || depth > maxReferences {
			return fmt.Errorf("%w: more than %d schema references", ErrBadSchema, maxReferences)
		}
		got, err := r.cl.SchemaByVersion(ctx, ref.Subject, ref.Version)
		if err != nil {
			return r.classify(err, fmt.Sprintf("reading reference %q (subject %q version %d)", ref.Name, ref.Subject, ref.Version))
		}
		out[ref.Name] = got.Schema.Schema
		if err := r.references(ctx, got.References, out, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// parse parses text, a schema of format f; refs are the texts of the
// schemas it references, by name.
func parse(f Format, text string, refs map[string]string) (*Schema, error) {
	s := &Schema{Format: f, Text: text}
	var err error
	switch f {
	case Avro:
		s.avro, err = parseAvro(text, refs)
	case Protobuf:
		s.proto, err = parseProto(text, refs)
	case JSONSchema:
		s.json, err = parseJSONSchema(text, refs)
	default:
		err = fmt.Errorf("format %q is not a registry format", f)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadSchema, f, err)
	}
	return s, nil
}

// classify wraps err, from asking the registry about what, in
// ErrUnknownSchema (it does not know the schema or subject), ErrUnavailable
// (it could not be asked or failed) or neither (it refused the request).
func (r *Registry) classify(err error, what string) error {
	if err == nil {
		return nil
	}
	var re *sr.ResponseError
	switch {
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		return fmt.Errorf("schema registry %s: %s: %w (%s)", r.url, what, ErrUnknownSchema, re.Message)
	case errors.As(err, &re) && re.StatusCode < 500 && re.StatusCode != http.StatusTooManyRequests && re.StatusCode != http.StatusRequestTimeout:
		return fmt.Errorf("schema registry %s: %s: %w", r.url, what, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("schema registry %s: %s: %w: %w", r.url, what, ErrUnavailable, err)
}

// boundedTransport refuses responses longer than MaxResponse: the client
// reads whole bodies.
type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > MaxResponse {
		resp.Body.Close()
		return nil, fmt.Errorf("response of %d bytes is more than %d", resp.ContentLength, MaxResponse)
	}
	resp.Body = &boundedBody{rc: resp.Body, left: MaxResponse}
	return resp, nil
}

type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("response longer than %d bytes", MaxResponse)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }
