package schemas

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
)

// Avro values are read and written by walking the writer's (or the sink's)
// schema with hamba/avro's Reader and Writer, not through its reflection
// codecs: the walk gives every value its plain JSON shape (a union's value
// itself, not wrapped in its type's name; an enum its symbol; a logical
// type its underlying number, so a timestamp-millis is epoch milliseconds,
// as time_field reads it), and bounds what a hostile record can make the
// host allocate or loop over.

// Bounds on one Avro value.
const (
	// maxDepth bounds nesting (records, arrays, maps, unions) while
	// reading or writing one value: recursive schemas make depth
	// data-driven.
	maxDepth = 64
	// maxBytes bounds one bytes or string field.
	maxBytes = 16 << 20
)

var avroConfig = avro.Config{MaxByteSliceSize: maxBytes, MaxSliceAllocSize: maxBytes}.Freeze()

// avroReaders pools hamba/avro Readers (each has a slab it reuses for
// short strings and bytes).
var avroReaders = sync.Pool{New: func() any { return avro.NewReader(nil, 0, avro.WithReaderConfig(avroConfig)) }}

type avroSchema struct {
	schema avro.Schema
}

func parseAvro(text string, refs map[string]string) (*avroSchema, error) {
	cache := &avro.SchemaCache{}
	// A reference is a named type of another schema: parse those first,
	// into the cache this schema resolves names from (they may refer to
	// each other: parse until no more parse).
	pending := make([]string, 0, len(refs))
	for _, t := range refs {
		pending = append(pending, t)
	}
	for len(pending) > 0 {
		var again []string
		var last error
		for _, t := range pending {
			if _, err := avro.ParseWithCache(t, "", cache); err != nil {
				again, last = append(again, t), err
			}
		}
		if len(again) == len(pending) {
			return nil, fmt.Errorf("a referenced schema: %w", last)
		}
		pending = again
	}
	s, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, err
	}
	return &avroSchema{schema: s}, nil
}

// avroReader reads one Avro value; items counts array items and map
// entries against a budget, since items of null or empty-record type take
// no bytes and a block may claim any count.
type avroReader struct {
	r     *avro.Reader
	items int
	out   plainOut
}

// decode reads b, one value of s, entirely, into out.
func (s *avroSchema) decode(b []byte, out plainOut) error {
	r := avroReaders.Get().(*avro.Reader)
	defer func() {
		r.Reset(nil)
		r.Error = nil
		avroReaders.Put(r)
	}()
	ar := avroReader{r: r.Reset(b), items: 4*len(b) + 1024, out: out}
	if err := ar.value(s.schema, 0); err != nil {
		return err
	}
	if ar.r.Error != nil {
		return fmt.Errorf("not Avro of the writer's schema: %w", ar.r.Error)
	}
	if ar.trailing() {
		return errors.New("not Avro of the writer's schema: bytes left after the value")
	}
	return out.err()
}

// trailing says whether bytes are left after the value: a value
// decoded with the wrong schema often leaves some.
func (ar *avroReader) trailing() bool {
	ar.r.Peek()
	left := ar.r.Error == nil
	ar.r.Error = nil
	return left
}

func (ar *avroReader) fail() error {
	if ar.r.Error != nil {
		return fmt.Errorf("not Avro of the writer's schema: %w", ar.r.Error)
	}
	return nil
}

func (ar *avroReader) value(s avro.Schema, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested more than %d deep", maxDepth)
	}
	r, out := ar.r, ar.out
	switch s := s.(type) {
	case *avro.RefSchema:
		return ar.value(s.Schema(), depth+1)
	case *avro.NullSchema:
		out.null()
		return nil
	case *avro.PrimitiveSchema:
		switch s.Type() {
		case avro.Null:
			out.null()
		case avro.Boolean:
			out.boolean(r.ReadBool())
		case avro.Int:
			out.integer(int64(r.ReadInt()))
		case avro.Long:
			out.integer(r.ReadLong())
		case avro.Float:
			out.float(float64(r.ReadFloat()))
		case avro.Double:
			out.float(r.ReadDouble())
		case avro.Bytes:
			out.bin(r.ReadBytes())
		case avro.String:
			x := r.ReadString()
			if !utf8.ValidString(x) {
				return errors.New("a string that is not UTF-8")
			}
			out.str(x)
		default:
			return fmt.Errorf("type %s is not supported", s.Type())
		}
		return ar.fail()
	case *avro.RecordSchema:
		out.beginObject()
		for _, f := range s.Fields() {
			out.key(f.Name())
			if err := ar.value(f.Type(), depth+1); err != nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
		}
		out.end()
		return nil
	case *avro.EnumSchema:
		i := r.ReadInt()
		if err := ar.fail(); err != nil {
			return err
		}
		syms := s.Symbols()
		if i < 0 || int(i) >= len(syms) {
			return fmt.Errorf("enum %s has no symbol %d", s.FullName(), i)
		}
		out.str(syms[i])
		return nil
	case *avro.FixedSchema:
		if s.Size() > maxBytes {
			return fmt.Errorf("fixed %s of %d bytes is too large", s.FullName(), s.Size())
		}
		b := make([]byte, s.Size())
		r.Read(b)
		out.bin(b)
		return ar.fail()
	case *avro.UnionSchema:
		i := r.ReadLong()
		if err := ar.fail(); err != nil {
			return err
		}
		types := s.Types()
		if i < 0 || i >= int64(len(types)) {
			return fmt.Errorf("union has no branch %d", i)
		}
		return ar.value(types[i], depth+1)
	case *avro.ArraySchema:
		out.beginArray()
		if err := ar.blocks(func() error { return ar.value(s.Items(), depth+1) }); err != nil {
			return err
		}
		out.end()
		return nil
	case *avro.MapSchema:
		out.beginObject()
		err := ar.blocks(func() error {
			k := r.ReadString()
			if err := ar.fail(); err != nil {
				return err
			}
			if !utf8.ValidString(k) {
				return errors.New("a map key that is not UTF-8")
			}
			out.key(k)
			return ar.value(s.Values(), depth+1)
		})
		if err != nil {
			return err
		}
		out.end()
		return nil
	}
	return fmt.Errorf("schema type %s is not supported", s.Type())
}

// blocks reads an array's or a map's blocks, calling item for each item.
func (ar *avroReader) blocks(item func() error) error {
	for {
		n, _ := ar.r.ReadBlockHeader()
		if err := ar.fail(); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n < 0 || n > int64(ar.items) {
			return fmt.Errorf("a block of %d items is more than the value can hold", n)
		}
		ar.items -= int(n)
		for range n {
			if err := item(); err != nil {
				return err
			}
		}
	}
}

// encode appends v, a plain value (maps, slices, strings, numbers as any
// numeric type or json.Number, []byte or base64 strings for bytes), as
// Avro of s to b.
func (s *avroSchema) encode(b []byte, v any) ([]byte, error) {
	w := avro.NewWriter(nil, 256, avro.WithWriterConfig(avroConfig))
	if err := writeAvro(w, s.schema, v, 0); err != nil {
		return b, err
	}
	if w.Error != nil {
		return b, w.Error
	}
	return append(b, w.Buffer()...), nil
}

var errNotFit = errors.New("does not fit")

func writeAvro(w *avro.Writer, s avro.Schema, v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested more than %d deep", maxDepth)
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		return writeAvro(w, s.Schema(), v, depth+1)
	case *avro.NullSchema:
		if v != nil {
			return fmt.Errorf("%w: want null, got %s", errNotFit, describe(v))
		}
		return nil
	case *avro.PrimitiveSchema:
		switch s.Type() {
		case avro.Null:
			if v != nil {
				return fmt.Errorf("%w: want null, got %s", errNotFit, describe(v))
			}
		case avro.Boolean:
			x, ok := v.(bool)
			if !ok {
				return fmt.Errorf("%w: want a boolean, got %s", errNotFit, describe(v))
			}
			w.WriteBool(x)
		case avro.Int:
			x, err := integer(v, math.MinInt32, math.MaxInt32)
			if err != nil {
				return err
			}
			w.WriteInt(int32(x))
		case avro.Long:
			x, err := integer(v, math.MinInt64, math.MaxInt64)
			if err != nil {
				return err
			}
			w.WriteLong(x)
		case avro.Float:
			x, err := float(v)
			if err != nil {
				return err
			}
			w.WriteFloat(float32(x))
		case avro.Double:
			x, err := float(v)
			if err != nil {
				return err
			}
			w.WriteDouble(x)
		case avro.Bytes:
			x, err := byteString(v)
			if err != nil {
				return err
			}
			w.WriteBytes(x)
		case avro.String:
			x, ok := v.(string)
			if !ok {
				return fmt.Errorf("%w: want a string, got %s", errNotFit, describe(v))
			}
			w.WriteString(x)
		default:
			return fmt.Errorf("type %s is not supported", s.Type())
		}
		return nil
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: want an object for record %s, got %s", errNotFit, s.FullName(), describe(v))
		}
		for k := range m {
			if !slices.ContainsFunc(s.Fields(), func(f *avro.Field) bool { return f.Name() == k }) {
				return fmt.Errorf("%w: record %s has no field %q", errNotFit, s.FullName(), k)
			}
		}
		for _, f := range s.Fields() {
			fv, ok := m[f.Name()]
			if !ok {
				if !f.HasDefault() {
					return fmt.Errorf("%w: field %q is missing and has no default", errNotFit, f.Name())
				}
				fv = f.Default()
			}
			if err := writeAvro(w, f.Type(), fv, depth+1); err != nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
		}
		return nil
	case *avro.EnumSchema:
		x, ok := v.(string)
		i := slices.Index(s.Symbols(), x)
		if !ok || i < 0 {
			return fmt.Errorf("%w: want a symbol of enum %s, got %s", errNotFit, s.FullName(), describe(v))
		}
		w.WriteInt(int32(i))
		return nil
	case *avro.FixedSchema:
		x, err := byteString(v)
		if err != nil {
			return err
		}
		if len(x) != s.Size() {
			return fmt.Errorf("%w: want %d bytes for fixed %s, got %d", errNotFit, s.Size(), s.FullName(), len(x))
		}
		w.Write(x)
		return nil
	case *avro.UnionSchema:
		// The first branch the value fits, tried on a scratch writer.
		var errs []error
		for i, t := range s.Types() {
			scratch := avro.NewWriter(nil, 64, avro.WithWriterConfig(avroConfig))
			if err := writeAvro(scratch, t, v, depth+1); err != nil {
				errs = append(errs, err)
				continue
			}
			w.WriteLong(int64(i))
			w.Write(scratch.Buffer())
			return nil
		}
		return fmt.Errorf("%w: %s fits no branch of the union: %w", errNotFit, describe(v), errors.Join(errs...))
	case *avro.ArraySchema:
		xs, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%w: want an array, got %s", errNotFit, describe(v))
		}
		if len(xs) > 0 {
			w.WriteBlockHeader(int64(len(xs)), 0)
			for i, x := range xs {
				if err := writeAvro(w, s.Items(), x, depth+1); err != nil {
					return fmt.Errorf("[%d]: %w", i, err)
				}
			}
		}
		w.WriteBlockHeader(0, 0)
		return nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: want an object for a map, got %s", errNotFit, describe(v))
		}
		if len(m) > 0 {
			w.WriteBlockHeader(int64(len(m)), 0)
			for _, k := range sortedKeys(m) {
				w.WriteString(k)
				if err := writeAvro(w, s.Values(), m[k], depth+1); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
			}
		}
		w.WriteBlockHeader(0, 0)
		return nil
	}
	return fmt.Errorf("schema type %s is not supported", s.Type())
}

// byteString is v as bytes: []byte itself (msgpack bin), or a string in
// base64 (JSON has no bytes; Decoder writes bytes to JSON as base64).
func byteString(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return nil, fmt.Errorf("%w: want bytes (base64 in JSON): %w", errNotFit, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: want bytes, got %s", errNotFit, describe(v))
}
