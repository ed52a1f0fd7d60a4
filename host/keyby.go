package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/jsonfield"
	"github.com/eddy-streams/eddy/msgfield"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/runtime"
)

// fieldKey extracts a key from a field of a record value, named by a
// dotted path, in the pipeline's record format.
type fieldKey interface {
	// key returns the key of value, appended to dst.
	key(dst, value []byte) ([]byte, error)
}

// newFieldKey returns the fieldKey of path for values in format (the
// pipeline's Source.ValueFormat): MessagePack for msgpack, JSON otherwise.
func newFieldKey(format, path string) (fieldKey, error) {
	if format == pipeline.FormatMsgpack {
		p, err := msgfield.Parse(path)
		if err != nil {
			return nil, err
		}
		return msgpackKey{p}, nil
	}
	p, err := jsonfield.Parse(path)
	if err != nil {
		return nil, err
	}
	return jsonKey{p}, nil
}

var errNullKey = errors.New("is null")

// jsonKey is the key of a JSON field: a string's key is the string itself
// (unquoted); any other value's key is its compact JSON text (42, true,
// {"a":1}).
type jsonKey struct {
	path jsonfield.Path
}

func (f jsonKey) key(dst, value []byte) ([]byte, error) {
	raw, err := f.path.Find(value)
	if err != nil {
		return dst, err
	}
	switch {
	case bytes.Equal(raw, []byte("null")):
		return dst, fmt.Errorf("field %s %w", f.path, errNullKey)
	case raw[0] == '"':
		s, err := jsonfield.String(raw)
		if err != nil {
			return dst, fmt.Errorf("field %s: %w", f.path, err)
		}
		return append(dst, s...), nil
	case raw[0] != '{' && raw[0] != '[':
		return append(dst, raw...), nil // a number or a literal: already compact
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return dst, fmt.Errorf("field %s: %w", f.path, err)
	}
	return append(dst, buf.Bytes()...), nil
}

// msgpackKey is the key of a MessagePack field: a string's or a binary
// value's key is its bytes; any other value's key is its canonical JSON
// text (msgfield.AppendJSON), so that equal values are equal keys however
// they are encoded (an integer in any width, or a float equal to it, is
// its decimal digits: 42; a map has its members sorted by key), and a
// number's key is the same as in a JSON pipeline. nil is refused, as JSON's
// null is.
type msgpackKey struct {
	path msgfield.Path
}

func (f msgpackKey) key(dst, value []byte) ([]byte, error) {
	raw, err := f.path.Find(value)
	if err != nil {
		return dst, err
	}
	if raw[0] == msgpcode.Nil {
		return dst, fmt.Errorf("field %s %w", f.path, errNullKey)
	}
	if b, ok := msgfield.Bytes(raw); ok {
		return append(dst, b...), nil
	}
	out, err := msgfield.AppendJSON(dst, raw)
	if err != nil {
		return dst, fmt.Errorf("field %s: %w", f.path, err)
	}
	return out, nil
}

// keyBy gives the records of a key_by step their new keys. Records whose key
// cannot be computed (not JSON or not MessagePack, as the pipeline's record
// format is; field missing or null; the guest refused or failed) go to the
// dead-letter topic; the others are returned, rekeyed.
func (t *task) keyBy(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	step := &t.n.p.Steps[s]
	fail := func(j int, reason string) {
		t.failRecord(ctx, b, s, cur, src, j, &runtime.Error{Function: step.Name, Kind: abi.KindKey,
			Cause: runtime.CauseGuest, Code: abi.CodeBadInput, Index: j, Group: -1, Reason: reason})
	}
	next, nsrc := cur[:0:0], make([]int32, 0, len(cur))
	if step.Field != "" {
		fk, err := newFieldKey(t.n.p.Source.ValueFormat(), step.Field)
		if err != nil {
			return nil, nil, err
		}
		// One buffer holds every new key of the batch.
		var keys []byte
		ends := make([]int, len(cur))
		for j := range cur {
			before := len(keys)
			if keys, err = fk.key(keys, cur[j].Value); err != nil {
				keys = keys[:before]
				ends[j] = -1
				fail(j, "key_by: "+err.Error())
				continue
			}
			ends[j] = len(keys)
		}
		start := 0
		for j := range cur {
			if ends[j] < 0 {
				continue
			}
			r := cur[j]
			r.Key = keys[start:ends[j]:ends[j]]
			start = ends[j]
			next, nsrc = append(next, r), append(nsrc, src[j])
		}
		return next, nsrc, nil
	}
	res, err := t.inst(s).Key(ctx, cur, t.results[:0])
	t.results = res
	if err != nil {
		return nil, nil, err
	}
	for j := range cur {
		if e := res[j].Err; e != nil {
			t.failRecord(ctx, b, s, cur, src, j, e)
			continue
		}
		r := cur[j]
		r.Key = res[j].Bytes
		next, nsrc = append(next, r), append(nsrc, src[j])
	}
	return next, nsrc, nil
}
