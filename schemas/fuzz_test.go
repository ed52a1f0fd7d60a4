package schemas_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/schemas"
)

// FuzzDecode decodes any bytes after the header of an Avro, a Protobuf and
// a JSON Schema schema (values a topic may hold): no panic, no error but
// the record's own (never ErrUnavailable: the schemas are known), and a
// value that decodes encodes again with its schema and decodes to the same
// plain value, as JSON and as msgpack.
func FuzzDecode(f *testing.F) {
	_, reg := newRegistry(f)
	ctx := context.Background()
	avro := register(f, reg, "bids-value", schemas.Avro, bidV2)
	proto := register(f, reg, "counts-value", schemas.Protobuf, countProto)
	js := register(f, reg, "prices-value", schemas.JSONSchema, priceSchema)
	for _, s := range []struct {
		s    *schemas.Schema
		msg  string
		json string
	}{
		{avro, "", `{"auction":8,"price":5,"bidder":{"id":4,"city":"x"},"channel":"web","date_time":1700000000456,"extra":"AA==","tags":["a","b"]}`},
		{proto, "Count", `{"city":"Oslo","count":12,"window":{"start":1,"end":2},"tags":["x"],"kind":"KIND_TUMBLING","blob":"AAE="}`},
		{proto, "eddy.test.Count.Window", `{"start":1}`},
		{js, "", `{"auction":1,"price":2.5}`},
	} {
		b := encode(f, s.s, schemas.JSON, s.msg, []byte(s.json))
		f.Add(uint8(s.s.ID), b[5:])
	}
	f.Add(uint8(avro.ID), []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	byID := map[int]*schemas.Schema{avro.ID: avro, proto.ID: proto, js.ID: js}
	f.Fuzz(func(t *testing.T, id uint8, body []byte) {
		s, ok := byID[int(id)]
		if !ok {
			return
		}
		value := append([]byte{0, 0, 0, 0, id}, body...)
		var first string // the value as canonical JSON, from the first target
		for _, to := range []schemas.Plain{schemas.JSON, schemas.Msgpack} {
			d := schemas.NewDecoder(reg, s.Format, to)
			plain, err := d.Decode(ctx, nil, value)
			if err != nil {
				if errors.Is(err, schemas.ErrUnavailable) || errors.Is(err, schemas.ErrUnknownSchema) {
					t.Fatalf("a known schema: %v", err)
				}
				if first != "" {
					t.Fatalf("%s decoded as JSON but not as %s: %v", s.Format, to, err)
				}
				return
			}
			c := canonical(t, to, plain)
			if first == "" {
				first = c
			} else if c != first {
				t.Fatalf("%s: as JSON %s, as msgpack %s", s.Format, first, c)
			}
			msg := ""
			if s.Format == schemas.Protobuf {
				msg = messageOf(t, body)
			}
			e, err := schemas.NewEncoder(s, to, msg)
			if err != nil {
				t.Fatal(err)
			}
			again, err := e.Encode(nil, plain)
			if err != nil {
				t.Fatalf("%s decoded to %q, which does not encode again: %v", s.Format, plain, err)
			}
			plain2, err := d.Decode(ctx, nil, again)
			if err != nil || canonical(t, to, plain2) != c {
				t.Fatalf("%s: %q encoded and decoded again is %q, %v", s.Format, plain, plain2, err)
			}
		}
	})
}

// canonical is a plain value as JSON with sorted keys and numbers as
// float64 (so 10, 10.0 and a msgpack float 10 are alike).
func canonical(t *testing.T, from schemas.Plain, b []byte) string {
	var v any
	if from == schemas.Msgpack {
		dec := msgpack.NewDecoder(bytes.NewReader(b))
		dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeMap() })
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("msgpack %q: %v", b, err)
		}
		v = jsonShape(v)
	} else if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("JSON %q: %v", b, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// jsonShape turns a msgpack value into what encoding/json would read from
// its JSON: numbers as float64, bytes as base64 strings.
func jsonShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonShape(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonShape(e)
		}
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
		f, _ := strconv.ParseFloat(fmt.Sprint(x), 64)
		return f
	}
	return v
}

// messageOf names the message type the Protobuf message indexes at the
// start of body name, for the test's schema.
func messageOf(t *testing.T, body []byte) string {
	var h sr.ConfluentHeader
	index, _, err := h.DecodeIndex(body, 16)
	if err != nil {
		t.Fatalf("decoded with bad indexes: %v", err)
	}
	switch fmt.Sprint(index) {
	case "[0]":
		return "Other"
	case "[1]":
		return "Count"
	case "[1 0]":
		return "eddy.test.Count.Window"
	}
	t.Fatalf("decoded with message indexes %v", index)
	return ""
}
