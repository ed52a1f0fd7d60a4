package schemas_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

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
		for _, to := range []schemas.Plain{schemas.JSON, schemas.Msgpack} {
			d := schemas.NewDecoder(reg, s.Format, to)
			plain, err := d.Decode(ctx, nil, value)
			if err != nil {
				if errors.Is(err, schemas.ErrUnavailable) || errors.Is(err, schemas.ErrUnknownSchema) {
					t.Fatalf("a known schema: %v", err)
				}
				continue
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
			if err != nil || !bytes.Equal(plain, plain2) {
				t.Fatalf("%s: %q encoded and decoded again is %q, %v", s.Format, plain, plain2, err)
			}
		}
	})
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
