package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/schemas"
)

// A pipeline whose source or sink has a schema registry format (avro,
// protobuf, json_schema) has its values decoded as they enter (into the
// source's value format, JSON or msgpack, before any step) and its sink's
// outputs encoded as they leave (with the sink subject's schema). A record
// that does not decode, an output that does not fit, goes to the
// dead-letter topic with the reason; a registry that cannot be reached
// while the node runs stalls the task, which asks again with backoff and
// loses nothing (its offsets are not committed meanwhile).

// formats are a node's registry codecs; the zero value codes nothing.
type formats struct {
	dec *schemas.Decoder // nil: the source's values go to the steps as they are
	enc *schemas.Encoder // nil: outputs go to the sink as the steps make them

	srcURL string

	mu struct {
		sync.Mutex
		down  bool      // the registry could not be asked, last time
		since time.Time // down since
		err   string    // why
	}
	unavailable atomic.Int64 // times a lookup found the registry unavailable
	down        atomic.Bool  // mu.down, read without the lock on the record path
}

// Dead-letter codes of records the formats refuse.
const (
	codeUndecodable   = "undecodable"    // a source value not in its format, or not of its writer's schema
	codeUnknownSchema = "unknown_schema" // a source value naming a schema the registry does not have
	codeBadSchema     = "bad_schema"     // a source value whose writer's schema cannot be used
	codeSinkMisfit    = "schema_misfit"  // an output that does not fit the sink's schema
)

// newFormats connects to the registries p's source and sink name: the
// node does not start when one cannot be reached, when the sink's subject
// has no schema (and p gives none to register), or when the registry
// refuses the schema p gives.
func newFormats(ctx context.Context, p *Pipeline) (*formats, error) {
	f := &formats{}
	registries := map[string]*schemas.Registry{}
	open := func(what, url string) (*schemas.Registry, error) {
		if r, ok := registries[url]; ok {
			return r, nil
		}
		r, err := schemas.NewRegistry(url, schemas.Options{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if err := r.Ping(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		registries[url] = r
		return r, nil
	}
	if src := p.Source; pipeline.IsRegistryFormat(src.Format) {
		r, err := open("source", src.Registry)
		if err != nil {
			return nil, err
		}
		f.dec = schemas.NewDecoder(r, schemas.Format(src.Format), schemas.Plain(src.As))
		f.srcURL = src.Registry
	}
	if sink := p.Sink; pipeline.IsRegistryFormat(sink.Format) {
		r, err := open("sink", sink.Registry)
		if err != nil {
			return nil, err
		}
		var s *schemas.Schema
		if sink.Schema != "" {
			text, err := os.ReadFile(p.SinkSchemaPath())
			if err != nil {
				return nil, fmt.Errorf("sink: schema: %w", err)
			}
			s, err = r.Register(ctx, sink.Subject, schemas.Format(sink.Format), string(text))
			if err != nil {
				return nil, fmt.Errorf("sink: schema %s: %w", sink.Schema, err)
			}
		} else {
			s, err = r.Latest(ctx, sink.Subject)
			if errors.Is(err, schemas.ErrUnknownSchema) {
				return nil, fmt.Errorf("sink: subject %q has no schema in %s: register one, or give sink.schema: %w", sink.Subject, sink.Registry, err)
			}
			if err != nil {
				return nil, fmt.Errorf("sink: %w", err)
			}
		}
		if s.Format != schemas.Format(sink.Format) {
			return nil, fmt.Errorf("sink: subject %q's schema (id %d) is %s, the sink writes %s", sink.Subject, s.ID, s.Format, sink.Format)
		}
		f.enc, err = schemas.NewEncoder(s, schemas.Plain(p.Source.ValueFormat()), sink.Message)
		if err != nil {
			return nil, fmt.Errorf("sink: %w", err)
		}
	}
	return f, nil
}

// RegistryStatus is the state of the schema registry a node reads its
// source's writers' schemas from.
type RegistryStatus struct {
	URL string `json:"url"`
	// Up is false while the node cannot ask the registry for a schema it
	// needs: the tasks that need it wait and ask again.
	Up    bool       `json:"up"`
	Since *time.Time `json:"since,omitempty"` // down since
	Error string     `json:"error,omitempty"` // why
}

// status is the registry's state, nil when the source has no registry.
func (f *formats) status() *RegistryStatus {
	if f == nil || f.dec == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := &RegistryStatus{URL: f.srcURL, Up: !f.mu.down}
	if f.mu.down {
		since := f.mu.since
		st.Since, st.Error = &since, f.mu.err
	}
	return st
}

func (f *formats) setDown(err error) {
	f.unavailable.Add(1)
	f.mu.Lock()
	if !f.mu.down {
		f.mu.down, f.mu.since = true, time.Now().UTC()
		f.down.Store(true)
	}
	f.mu.err = err.Error()
	f.mu.Unlock()
}

func (f *formats) setUp() {
	f.mu.Lock()
	f.mu.down, f.mu.err = false, ""
	f.down.Store(false)
	f.mu.Unlock()
}

// Backoff between asks of a registry that could not be reached.
const (
	registryRetryMin = 100 * time.Millisecond
	registryRetryMax = 10 * time.Second
)

// decodeSource decodes the values of in (records of b, in[i] from
// b.records[src[i]]) in place, dead-letters those that do not decode and
// returns the others. While the registry cannot be reached it waits and
// asks again; it returns ctx's error, or errGiveUpBatch (decodeValue).
func (t *task) decodeSource(ctx context.Context, b *batch, in []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	f := t.n.formats
	if f == nil || f.dec == nil {
		return in, src, nil
	}
	keep := 0
	for i := range in {
		v, err := t.decodeValue(ctx, in[i].Value)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if errors.Is(err, errGiveUpBatch) {
				return nil, nil, err
			}
			code := codeUndecodable
			switch {
			case errors.Is(err, schemas.ErrUnknownSchema):
				code = codeUnknownSchema
			case errors.Is(err, schemas.ErrBadSchema):
				code = codeBadSchema
			}
			t.deadLetterFormat(ctx, b, b.records[src[i]], "source", fmt.Sprintf("source format %s: %v", t.n.p.Source.Format, err), code)
			continue
		}
		in[i].Value = v
		in[keep], src[keep] = in[i], src[i]
		keep++
	}
	return in[:keep], src[:keep], nil
}

// errGiveUpBatch: a task gives its batch up (the registry stayed away for
// half the transaction timeout). Under exactly_once the transaction then
// aborts and the batch's records are fetched again, rather than the broker
// aborting the transaction under the node and fencing it.
var errGiveUpBatch = errors.New("batch given up: the schema registry is unavailable")

// decodeValue decodes one value, waiting out an unavailable registry: as
// long as it takes, except under exactly_once on Kafka, where the wait is
// bounded by half the transaction timeout (then errGiveUpBatch).
func (t *task) decodeValue(ctx context.Context, value []byte) ([]byte, error) {
	f := t.n.formats
	v, err := f.dec.Decode(ctx, nil, value)
	if !errors.Is(err, schemas.ErrUnavailable) {
		if err == nil && f.down.Load() {
			f.setUp()
		}
		return v, err
	}
	// The registry is away: wait and ask again (not on the per-record
	// path above, which takes one decode and one atomic load).
	wait := registryRetryMin
	var giveUp time.Time
	if _, kafka := t.n.drv.(kafkaDriver); kafka && t.n.p.Delivery == ExactlyOnce {
		giveUp = time.Now().Add(transactionTimeout(t.n.p) / 2)
	}
	for {
		f.setDown(err)
		if !giveUp.IsZero() && time.Now().Add(wait).After(giveUp) {
			t.n.log.Warn("schema registry unavailable; the transaction aborts and the records come again", "error", err)
			return nil, fmt.Errorf("%w: %w", errGiveUpBatch, err)
		}
		t.n.log.Warn("schema registry unavailable; waiting", "retry_in", wait, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, registryRetryMax)
		if v, err = f.dec.Decode(ctx, nil, value); !errors.Is(err, schemas.ErrUnavailable) {
			if err == nil {
				f.setUp()
			}
			return v, err
		}
	}
}

// encodeSink encodes the values of outs, the stage's outputs to the sink
// (outs[i] made from b.records[src[i]], or a window result when src[i] <
// 0), in place with the sink's schema. An output that does not fit is not
// produced (skip[i] set; skip is made when nil) and its input record is
// dead-lettered, once, as oversized outputs are.
func (t *task) encodeSink(ctx context.Context, b *batch, outs []kgo.Record, src []int32, skip []bool) []bool {
	enc := t.n.formats.enc
	var failed map[int32]bool
	for i := range outs {
		if skip != nil && skip[i] {
			continue
		}
		v, err := enc.Encode(nil, outs[i].Value)
		if err == nil {
			outs[i].Value = v
			continue
		}
		if skip == nil {
			skip = make([]bool, len(outs))
		}
		skip[i] = true
		reason := fmt.Sprintf("sink format %s, subject %q: %v", t.n.p.Sink.Format, t.n.p.Sink.Subject, err)
		if src[i] < 0 {
			t.deadLetterFormat(ctx, b, &outs[i], "sink", reason, codeSinkMisfit)
			continue
		}
		if failed == nil {
			failed = map[int32]bool{}
		}
		if !failed[src[i]] {
			failed[src[i]] = true
			t.deadLetterFormat(ctx, b, b.records[src[i]], "sink", reason, codeSinkMisfit)
		}
	}
	return skip
}

// deadLetterFormat dead-letters orig, refused by the source's or the
// sink's format (where: "source" or "sink", its eddy.step header).
func (t *task) deadLetterFormat(ctx context.Context, b *batch, orig *kgo.Record, where, reason, code string) {
	var extra []kgo.RecordHeader
	if orig.Topic != "" && orig.Topic != t.n.p.Sink.Topic {
		extra = sourceHeaders(orig)
	}
	msg := t.produceDeadLetter(ctx, b, orig, where, "none", reason, code, extra...)
	side := 0
	if where == "sink" {
		side = 1
	}
	t.n.metrics.formatRefused[side].Add(1)
	t.n.log.Warn("record dead-lettered", "at", where, "topic", orig.Topic, "partition", orig.Partition,
		"offset", orig.Offset, "error", msg)
}
