package msgpack_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/eddy-streams/eddy/abi/msgpack"
)

func TestIntsRoundTripInShortestForm(t *testing.T) {
	tests := []struct {
		v    int64
		size int
	}{
		{0, 1}, {127, 1}, {128, 2}, {255, 2}, {256, 3}, {65535, 3}, {65536, 5}, {math.MaxUint32, 5},
		{math.MaxUint32 + 1, 9}, {math.MaxInt64, 9}, {-1, 1}, {-32, 1}, {-33, 2}, {-128, 2}, {-129, 3},
		{math.MinInt16, 3}, {math.MinInt16 - 1, 5}, {math.MinInt32, 5}, {math.MinInt32 - 1, 9}, {math.MinInt64, 9},
	}
	for _, tc := range tests {
		b := msgpack.AppendInt(nil, tc.v)
		if len(b) != tc.size {
			t.Errorf("%d encodes to %d bytes, want %d", tc.v, len(b), tc.size)
		}
		got, err := msgpack.NewReader(b).Int()
		if err != nil || got != tc.v {
			t.Errorf("%d decodes to %d, %v", tc.v, got, err)
		}
	}
	// Non-shortest forms written by other encoders are accepted.
	for _, b := range [][]byte{{0xcc, 5}, {0xcd, 0, 5}, {0xce, 0, 0, 0, 5}, {0xd0, 5}, {0xd1, 0, 5}, {0xd2, 0, 0, 0, 5}, {0xd3, 0, 0, 0, 0, 0, 0, 0, 5}} {
		if v, err := msgpack.NewReader(b).Int(); err != nil || v != 5 {
			t.Errorf("% x = %d, %v", b, v, err)
		}
	}
	if _, err := msgpack.NewReader([]byte{0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0}).Int(); err == nil {
		t.Error("uint64 above MaxInt64 accepted")
	}
}

func TestBytesNilEmptyAndStr(t *testing.T) {
	b := msgpack.AppendBin(nil, nil)
	b = msgpack.AppendBin(b, []byte{})
	b = msgpack.AppendStr(b, "hé")
	b = msgpack.AppendBin(b, bytes.Repeat([]byte{1}, 70000))
	r := msgpack.NewReader(b)
	if v, err := r.Bytes(); err != nil || v != nil {
		t.Fatalf("nil: %v %v", v, err)
	}
	if v, err := r.Bytes(); err != nil || v == nil || len(v) != 0 {
		t.Fatalf("empty: %v %v", v, err)
	}
	if v, err := r.Bytes(); err != nil || string(v) != "hé" {
		t.Fatalf("str as bytes: %q %v", v, err)
	}
	if v, err := r.Bytes(); err != nil || len(v) != 70000 {
		t.Fatalf("bin32: %d %v", len(v), err)
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes left", r.Len())
	}
}

func TestErrors(t *testing.T) {
	if _, err := msgpack.NewReader([]byte{0xc4, 5, 1}).Bytes(); !errors.Is(err, msgpack.ErrShort) {
		t.Errorf("short bin: %v", err)
	}
	var te *msgpack.TypeError
	if _, err := msgpack.NewReader([]byte{0xcb}).Int(); !errors.As(err, &te) || te.Got != 0xcb {
		t.Errorf("float as int: %v", err)
	}
	if _, err := msgpack.NewReader([]byte{0xdd, 0x00, 0xff, 0xff, 0xff}).ArrayHeader(); !errors.Is(err, msgpack.ErrShort) {
		t.Errorf("huge array count: %v", err)
	}
	deep := bytes.Repeat([]byte{0x91}, 100)
	if err := msgpack.NewReader(append(deep, 0xc0)).Skip(); err == nil {
		t.Error("skip accepted nesting of 100")
	}
}
