package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Plain is what a Decoder gives functions and an Encoder reads from them:
// JSON text or a msgpack value.
type Plain string

// The plain formats.
const (
	JSON    Plain = "json"
	Msgpack Plain = "msgpack"
)

// ErrMisfit is wrapped by the errors of values that do not fit a schema:
// a record the Decoder cannot read with its writer's schema, an output
// the Encoder cannot write with the sink's.
var ErrMisfit = errNotFit

// Decoder reads values in a registry format into plain values.
type Decoder struct {
	reg    *Registry
	format Format
	to     Plain
}

// NewDecoder returns a Decoder of format f values, looking schemas up in
// reg and giving values as to.
func NewDecoder(reg *Registry, f Format, to Plain) *Decoder {
	return &Decoder{reg: reg, format: f, to: to}
}

// Decode returns value, in the Confluent wire format, as a plain value
// appended to dst; a nil value (a tombstone) stays nil. An error wrapping
// ErrUnavailable means the registry could not be asked for the writer's
// schema (try again later); any other error is the record's (a bad
// header, an unknown schema id, a schema of another format, a value that
// is not of its schema) and never goes away.
func (d *Decoder) Decode(ctx context.Context, dst, value []byte) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	var h sr.ConfluentHeader
	id, rest, err := h.DecodeID(value)
	if err != nil {
		return dst, fmt.Errorf("%w: not in the schema registry wire format (want a zero byte and a 4-byte schema id first)", errNotFit)
	}
	s, err := d.reg.ByID(ctx, id)
	if err != nil {
		return dst, err
	}
	if s.Format != d.format {
		return dst, fmt.Errorf("%w: schema id %d is %s, the source reads %s", errNotFit, id, s.Format, d.format)
	}
	// The one writer the target needs: JSON written as the walk goes
	// (pooled: its stack of open containers is kept), or a tree for
	// msgpack.
	var out plainOut
	var jout *jsonOut
	var tree *treeOut
	if d.to == Msgpack {
		tree = &treeOut{}
		out = tree
	} else {
		jout = jsonOuts.Get().(*jsonOut)
		defer jsonOuts.Put(jout)
		jout.reset(dst)
		out = jout
	}
	switch s.Format {
	case Avro:
		err = s.avro.decode(rest, out)
	case Protobuf:
		var index []int
		index, rest, err = h.DecodeIndex(rest, maxIndexes)
		if err != nil {
			return dst, fmt.Errorf("%w: bad Protobuf message indexes: %w", errNotFit, err)
		}
		md, merr := s.proto.message(index)
		if merr != nil {
			return dst, fmt.Errorf("%w: schema id %d: %w", errNotFit, id, merr)
		}
		err = decodeProto(md, rest, out)
	case JSONSchema:
		var v any
		if v, err = s.json.validate(rest); err == nil {
			if d.to == Msgpack {
				tree.root = v
			} else {
				var buf bytes.Buffer
				if err = json.Compact(&buf, rest); err == nil {
					jout.b = append(jout.b, buf.Bytes()...)
				}
			}
		}
	}
	if err != nil {
		return dst, fmt.Errorf("%w: schema id %d: %w", errNotFit, id, err)
	}
	if d.to == Msgpack {
		return appendPlain(dst, Msgpack, tree.root)
	}
	b := jout.b
	jout.b = nil
	return b, nil
}

// Encoder writes plain values with one schema.
type Encoder struct {
	schema *Schema
	from   Plain
	index  []int
	msg    protoreflect.MessageDescriptor
}

// NewEncoder returns an Encoder writing values read as from with s; for
// Protobuf, message names the message type (default: the file's first).
func NewEncoder(s *Schema, from Plain, message string) (*Encoder, error) {
	e := &Encoder{schema: s, from: from}
	if s.Format == Protobuf {
		md, index, err := s.proto.byName(message)
		if err != nil {
			return nil, fmt.Errorf("schema id %d: %w", s.ID, err)
		}
		e.msg, e.index = md, index
	} else if message != "" {
		return nil, fmt.Errorf("a message type is for Protobuf schemas; schema id %d is %s", s.ID, s.Format)
	}
	return e, nil
}

// Schema is the schema e writes with.
func (e *Encoder) Schema() *Schema { return e.schema }

// Encode returns value, a plain value, in the Confluent wire format of
// e's schema, appended to dst; a nil value (a tombstone) stays nil. Its
// errors wrap ErrMisfit: the value does not fit the schema.
func (e *Encoder) Encode(dst, value []byte) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	v, err := readPlain(e.from, value)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", errNotFit, err)
	}
	var h sr.ConfluentHeader
	start := len(dst)
	var index []int
	if e.schema.Format == Protobuf {
		index = e.index
	}
	dst, _ = h.AppendEncode(dst, e.schema.ID, index)
	switch e.schema.Format {
	case Avro:
		dst, err = e.schema.avro.encode(dst, v)
	case Protobuf:
		dst, err = encodeProto(dst, e.msg, v)
	case JSONSchema:
		var j []byte
		if j, err = toJSON(v); err == nil {
			if _, err = e.schema.json.validate(j); err == nil {
				dst = append(dst, j...)
			}
		}
	}
	if err != nil {
		if !errors.Is(err, errNotFit) {
			err = fmt.Errorf("%w: %w", errNotFit, err)
		}
		return dst[:start], fmt.Errorf("does not fit schema id %d (%s): %w", e.schema.ID, e.schema.Format, err)
	}
	return dst, nil
}

// appendPlain appends v as to.
func appendPlain(dst []byte, to Plain, v any) ([]byte, error) {
	if to == Msgpack {
		v = msgpackNumbers(v)
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetSortMapKeys(true)
		enc.UseCompactInts(true)
		enc.UseCompactFloats(false)
		if err := enc.Encode(v); err != nil {
			return dst, fmt.Errorf("%w: as msgpack: %w", errNotFit, err)
		}
		return append(dst, buf.Bytes()...), nil
	}
	j, err := toJSON(v)
	if err != nil {
		return dst, err
	}
	return append(dst, j...), nil
}

// msgpackNumbers replaces JSON's numbers (json.Number) in v with
// integers where their value is an integer (10.0 too: JSON does not tell
// them apart), floats otherwise, for msgpack (which would write a
// json.Number as a string). Depth is bounded by the
// decoders v comes from.
func msgpackNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return int64(f)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = msgpackNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = msgpackNumbers(e)
		}
	}
	return v
}

// toJSON is v as compact JSON (bytes in base64, as encoding/json writes
// them; HTML characters as they are).
func toJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: as JSON: %w", errNotFit, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// readPlain reads a plain value: numbers of JSON as json.Number, maps
// with string keys as map[string]any.
func readPlain(from Plain, b []byte) (any, error) {
	var v any
	if from == Msgpack {
		dec := msgpack.NewDecoder(bytes.NewReader(b))
		dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeUntypedMap() })
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not msgpack: %w", err)
		}
		if dec.Buffered().(*bytes.Reader).Len() > 0 {
			return nil, errors.New("not msgpack: bytes left after the value")
		}
		return stringKeys(v, 0)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: more after the value")
	}
	return v, nil
}

// stringKeys turns msgpack maps (map[any]any) with string keys into
// map[string]any.
func stringKeys(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d deep", maxDepth)
	}
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("a map key is %s, not a string", describe(k))
			}
			e, err := stringKeys(e, depth+1)
			if err != nil {
				return nil, err
			}
			m[ks] = e
		}
		return m, nil
	case map[string]any:
		for k, e := range x {
			e, err := stringKeys(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
	case []any:
		for i, e := range x {
			e, err := stringKeys(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = e
		}
	}
	return v, nil
}

// integer is v as an integer in [lo, hi].
func integer(v any, lo, hi int64) (int64, error) {
	var i int64
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
				return 0, fmt.Errorf("%w: want an integer, got %s", errNotFit, x)
			}
			n = int64(f)
		}
		i = n
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case int:
		i = int64(x)
	case uint8:
		i = int64(x)
	case uint16:
		i = int64(x)
	case uint32:
		i = int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%w: %d is out of range", errNotFit, x)
		}
		i = int64(x)
	case float32, float64:
		f, _ := float(x)
		if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			return 0, fmt.Errorf("%w: want an integer, got %v", errNotFit, f)
		}
		i = int64(f)
	default:
		return 0, fmt.Errorf("%w: want an integer, got %s", errNotFit, describe(v))
	}
	if i < lo || i > hi {
		return 0, fmt.Errorf("%w: %d is out of range", errNotFit, i)
	}
	return i, nil
}

// float is v as a float64.
func float(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, fmt.Errorf("%w: want a number, got %s", errNotFit, x)
		}
		return f, nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	}
	i, err := integer(v, math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0, fmt.Errorf("%w: want a number, got %s", errNotFit, describe(v))
	}
	return float64(i), nil
}

// describe names v's kind for an error.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return "the string " + strconv.Quote(x)
	case json.Number, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, float32, float64:
		return fmt.Sprintf("the number %v", x)
	case []byte:
		return "bytes"
	case []any:
		return "an array"
	case map[string]any, map[any]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
