package msgpack

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestIntRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		v    int64
		size int // bytes of the shortest form
	}{
		{"zero", 0, 1},
		{"max positive fixint", 127, 1},
		{"min uint8", 128, 2},
		{"max uint8", 255, 2},
		{"min uint16", 256, 3},
		{"max uint16", math.MaxUint16, 3},
		{"min uint32", math.MaxUint16 + 1, 5},
		{"max uint32", math.MaxUint32, 5},
		{"min uint64", math.MaxUint32 + 1, 9},
		{"max int64", math.MaxInt64, 9},
		{"minus one", -1, 1},
		{"min negative fixint", -32, 1},
		{"max int8", -33, 2},
		{"min int8", math.MinInt8, 2},
		{"max int16", math.MinInt8 - 1, 3},
		{"min int16", math.MinInt16, 3},
		{"max int32", math.MinInt16 - 1, 5},
		{"min int32", math.MinInt32, 5},
		{"max int64 negative", math.MinInt32 - 1, 9},
		{"min int64", math.MinInt64, 9},
		{"timestamp", 1700000000000, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendInt(nil, tt.v)
			if len(b) != tt.size {
				t.Fatalf("AppendInt(%d) = % x, want %d bytes", tt.v, b, tt.size)
			}
			var r Reader
			r.Reset(b)
			if got := r.Int(); got != tt.v || r.Err() != nil || r.Len() != 0 {
				t.Fatalf("Int() = %d, %v, %d left; want %d", got, r.Err(), r.Len(), tt.v)
			}
		})
	}
}

// TestIntAllWidths decodes integers written in forms longer than necessary,
// which the ABI allows encoders to use.
func TestIntAllWidths(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want int64
	}{
		{"uint8", []byte{Uint8, 5}, 5},
		{"uint16", []byte{Uint16, 0, 5}, 5},
		{"uint32", []byte{Uint32, 0, 0, 1, 0}, 256},
		{"uint64", []byte{Uint64, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0}, 1700000000000},
		{"int8 positive", []byte{Int8, 5}, 5},
		{"int8", []byte{Int8, 0xff}, -1},
		{"int16", []byte{Int16, 0xff, 0xfe}, -2},
		{"int32", []byte{Int32, 0xff, 0xff, 0xff, 0xfd}, -3},
		{"int64", []byte{Int64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc}, -4},
		{"int64 positive", []byte{Int64, 0, 0, 0, 0, 0, 0, 0, 7}, 7},
		{"negative fixint", []byte{0xe0}, -32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Reader
			r.Reset(tt.in)
			if got := r.Int(); got != tt.want || r.Err() != nil || r.Len() != 0 {
				t.Fatalf("Int() = %d, %v; want %d", got, r.Err(), tt.want)
			}
		})
	}
}

func TestIntErrors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "unexpected end"},
		{"short uint16", []byte{Uint16, 1}, "unexpected end"},
		{"short int64", []byte{Int64, 1, 2, 3}, "unexpected end"},
		{"uint64 overflow", []byte{Uint64, 0x80, 0, 0, 0, 0, 0, 0, 0}, "overflows int64"},
		{"str", []byte{0xa1, 'x'}, "want int"},
		{"float", []byte{0xcb, 0, 0, 0, 0, 0, 0, 0, 0}, "want int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Reader
			r.Reset(tt.in)
			r.Int()
			if r.Err() == nil || !strings.Contains(r.Err().Error(), tt.want) {
				t.Fatalf("error %v, want %q", r.Err(), tt.want)
			}
			if r.Offset() != 0 {
				t.Fatalf("consumed %d bytes on error", r.Offset())
			}
		})
	}
}

func TestBytesNilVersusEmpty(t *testing.T) {
	b := AppendBin(nil, nil)
	b = AppendBin(b, []byte{})
	b = AppendBin(b, []byte("x"))
	if want := []byte{Nil, Bin8, 0, Bin8, 1, 'x'}; !bytes.Equal(b, want) {
		t.Fatalf("encoded % x, want % x", b, want)
	}
	var r Reader
	r.Reset(b)
	if v := r.Bytes(); v != nil {
		t.Fatalf("nil read as %q", v)
	}
	if v := r.Bytes(); v == nil || len(v) != 0 {
		t.Fatalf("empty bin read as %#v", v)
	}
	if v := r.Bytes(); string(v) != "x" {
		t.Fatalf("bin read as %q", v)
	}
	// An empty str is also an empty, non-nil value.
	r.Reset([]byte{0xa0})
	if v := r.Bytes(); v == nil || len(v) != 0 || r.Err() != nil {
		t.Fatalf("empty str read as %#v, %v", v, r.Err())
	}
	// Str refuses nil.
	r.Reset([]byte{Nil})
	if r.Str(); r.Err() == nil {
		t.Fatal("Str accepted nil")
	}
}

func TestBytesAllWidths(t *testing.T) {
	long := strings.Repeat("a", 70000)
	for _, n := range []int{0, 1, 31, 32, 255, 256, 65535, 65536, 70000} {
		v := long[:n]
		var r Reader

		bin := AppendBin(nil, []byte(v))
		r.Reset(bin)
		if got := r.Bytes(); string(got) != v || r.Len() != 0 || r.Err() != nil {
			t.Fatalf("bin of %d bytes: got %d bytes, %v", n, len(got), r.Err())
		}
		wantHead := map[bool]int{n <= 255: 2, n > 255 && n <= 65535: 3, n > 65535: 5}[true]
		if len(bin)-n != wantHead {
			t.Fatalf("bin of %d bytes has a %d-byte header, want %d", n, len(bin)-n, wantHead)
		}

		str := AppendStr(nil, v)
		r.Reset(str)
		if got := r.Str(); string(got) != v || r.Len() != 0 || r.Err() != nil {
			t.Fatalf("str of %d bytes: got %d bytes, %v", n, len(got), r.Err())
		}
		r.Reset(str)
		if got := r.Bytes(); string(got) != v {
			t.Fatalf("Bytes of a str of %d bytes: got %d bytes", n, len(got))
		}
		if n < 32 && len(str) != n+1 {
			t.Fatalf("str of %d bytes is not a fixstr", n)
		}
	}
	// str 8/16/32 written by another encoder for short strings.
	for _, in := range [][]byte{
		{Str8, 2, 'h', 'i'}, {Str16, 0, 2, 'h', 'i'}, {Str32, 0, 0, 0, 2, 'h', 'i'},
		{Bin16, 0, 2, 'h', 'i'}, {Bin32, 0, 0, 0, 2, 'h', 'i'},
	} {
		var r Reader
		r.Reset(in)
		if got := r.Bytes(); string(got) != "hi" || r.Err() != nil {
			t.Fatalf("% x read as %q, %v", in, got, r.Err())
		}
	}
}

// TestBytesViewCapacity checks that a view cannot be appended into the input.
func TestBytesViewCapacity(t *testing.T) {
	in := []byte{Bin8, 1, 'a', Bin8, 1, 'b'}
	var r Reader
	r.Reset(in)
	v := r.Bytes()
	_ = append(v, 'X')
	if in[3] != Bin8 {
		t.Fatal("append to a view overwrote the input")
	}
}

func TestBytesErrors(t *testing.T) {
	for _, in := range [][]byte{
		{Bin8}, {Bin8, 2, 'a'}, {Bin16, 0}, {Bin32, 0, 0, 0}, {Bin32, 0xff, 0xff, 0xff, 0xff, 1},
		{0xa3, 'a'}, {Str8, 5},
	} {
		var r Reader
		r.Reset(in)
		if r.Bytes(); !errors.Is(r.Err(), ErrShort) {
			t.Fatalf("% x: error %v, want ErrShort", in, r.Err())
		}
	}
	var r Reader
	r.Reset([]byte{0x01})
	r.Bytes()
	var e *Error
	if !errors.As(r.Err(), &e) || e.Got != 0x01 || e.Offset != 0 {
		t.Fatalf("error %v, want a type error", r.Err())
	}
}

func TestHeaders(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 65535, 65536} {
		for _, kind := range []string{"array", "map"} {
			var b []byte
			if kind == "array" {
				b = AppendArrayHeader(nil, n)
			} else {
				b = AppendMapHeader(nil, n)
			}
			head := len(b)
			b = append(b, make([]byte, 2*n)...) // room for the elements
			var r Reader
			r.Reset(b)
			var got int
			if kind == "array" {
				got = r.ArrayLen()
			} else {
				got = r.MapLen()
			}
			if got != n || r.Offset() != head || r.Err() != nil {
				t.Fatalf("%s of %d: got %d, offset %d, %v", kind, n, got, r.Offset(), r.Err())
			}
		}
	}
	// Long forms for short counts.
	for _, in := range [][]byte{{Array16, 0, 1, 0}, {Array32, 0, 0, 0, 1, 0}} {
		var r Reader
		r.Reset(in)
		if n := r.ArrayLen(); n != 1 || r.Err() != nil {
			t.Fatalf("% x: %d, %v", in, n, r.Err())
		}
	}
	for _, in := range [][]byte{{Map16, 0, 1, 0, 0}, {Map32, 0, 0, 0, 1, 0, 0}} {
		var r Reader
		r.Reset(in)
		if n := r.MapLen(); n != 1 || r.Err() != nil {
			t.Fatalf("% x: %d, %v", in, n, r.Err())
		}
	}
	// A count larger than the bytes left is refused before anyone allocates.
	for _, in := range [][]byte{{0x92, 0}, {Array32, 0x7f, 0xff, 0xff, 0xff}, {Array16}} {
		var r Reader
		r.Reset(in)
		if r.ArrayLen(); !errors.Is(r.Err(), ErrShort) {
			t.Fatalf("% x: error %v, want ErrShort", in, r.Err())
		}
	}
	var r Reader
	r.Reset([]byte{0x81, 0, 0})
	if r.ArrayLen(); r.Err() == nil {
		t.Fatal("map read as array")
	}
}

func TestBoolAndNil(t *testing.T) {
	b := AppendBool(AppendBool(AppendNil(nil), true), false)
	var r Reader
	r.Reset(b)
	if !r.IsNil() {
		t.Fatal("IsNil false on nil")
	}
	r.Nil()
	if r.IsNil() || !r.Bool() || r.Bool() || r.Err() != nil || r.Len() != 0 {
		t.Fatalf("bool/nil round trip failed: %v", r.Err())
	}
	r.Reset([]byte{0x01})
	if r.Nil(); r.Err() == nil {
		t.Fatal("Nil accepted 0x01")
	}
	r.Reset([]byte{0x01})
	if r.Bool(); r.Err() == nil {
		t.Fatal("Bool accepted 0x01")
	}
}

func TestStickyError(t *testing.T) {
	var r Reader
	r.Reset([]byte{0xa1, 'x', 0x05})
	r.Int() // type error on the str
	if r.Err() == nil {
		t.Fatal("no error")
	}
	first := r.Err()
	if v := r.Bytes(); v != nil || r.Offset() != 0 || r.Err() != first {
		t.Fatalf("reader moved after an error: %q, offset %d", v, r.Offset())
	}
	r.Reset([]byte{0x05})
	if r.Err() != nil || r.Int() != 5 {
		t.Fatal("Reset did not clear the error")
	}
}

// nested builds {"a": [1, {"b": nil}, "s"], "k": bin, "u": uint64 max}.
func nested() []byte {
	var b []byte
	b = AppendMapHeader(b, 3)
	b = AppendStr(b, "a")
	b = AppendArrayHeader(b, 3)
	b = AppendInt(b, 1)
	b = AppendMapHeader(b, 1)
	b = AppendStr(b, "b")
	b = AppendNil(b)
	b = AppendStr(b, "s")
	b = AppendStr(b, "k")
	b = AppendBin(b, []byte{1, 2, 3})
	b = AppendStr(b, "u")
	b = append(b, Uint64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	return b
}

func TestSkip(t *testing.T) {
	v := nested()
	b := append(append([]byte{}, v...), 0x07)
	var r Reader
	r.Reset(b)
	r.Skip()
	if r.Err() != nil || r.Offset() != len(v) {
		t.Fatalf("Skip consumed %d of %d bytes: %v", r.Offset(), len(v), r.Err())
	}
	if r.Int() != 7 {
		t.Fatal("value after the skipped map is wrong")
	}

	// Every scalar and every long form.
	var all []byte
	all = append(all, Nil, True, False, 0x01, 0xff, Uint8, 1, Uint16, 0, 1, Uint32, 0, 0, 0, 1,
		Int8, 1, Int16, 0, 1, Int32, 0, 0, 0, 1, Int64, 0, 0, 0, 0, 0, 0, 0, 1,
		0xa1, 'x', Str8, 1, 'x', Str16, 0, 1, 'x', Str32, 0, 0, 0, 1, 'x',
		Bin8, 1, 'x', Bin16, 0, 1, 'x', Bin32, 0, 0, 0, 1, 'x',
		Array16, 0, 1, 0x90, Array32, 0, 0, 0, 0, Map16, 0, 0, Map32, 0, 0, 0, 1, 0xa0, 0x80)
	r.Reset(all)
	n := 0
	for r.Len() > 0 && r.Err() == nil {
		r.Skip()
		n++
	}
	if r.Err() != nil || n != 23 {
		t.Fatalf("skipped %d values: %v", n, r.Err())
	}
}

func TestSkipErrors(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, MaxDepth+2)
	deep = append(deep, 0)
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"float", []byte{0xca, 0, 0, 0, 0}, "want a value"},
		{"ext", []byte{0xd4, 0, 0}, "want a value"},
		{"truncated map", nested()[:10], "unexpected end"},
		{"truncated uint64", []byte{Uint64, 0}, "unexpected end"},
		{"too deep", deep, "nesting deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Reader
			r.Reset(tt.in)
			r.Skip()
			if r.Err() == nil || !strings.Contains(r.Err().Error(), tt.want) {
				t.Fatalf("error %v, want %q", r.Err(), tt.want)
			}
		})
	}
}

func TestAppendReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendArrayHeader(buf[:0], 4)
		b = AppendBin(b, []byte("key"))
		b = AppendBin(b, nil)
		b = AppendInt(b, 1700000000000)
		b = AppendStr(b, "reason")
		_ = b
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per encode, want 0", allocs)
	}
}

// FuzzReader checks that no input makes the reader panic, and that Skip and
// the typed readers agree on where a value ends.
func FuzzReader(f *testing.F) {
	f.Add(nested())
	f.Add([]byte{0x91, 0x94, Bin8, 1, 'k', Bin8, 2, 'h', 'i', Uint64, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0x90})
	f.Add([]byte{Array32, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Reader
		r.Reset(b)
		r.Skip()
		if r.Err() != nil {
			return
		}
		end := r.Offset()
		// A scalar read with its typed reader ends where Skip ended.
		r.Reset(b)
		switch c := b[0]; {
		case c <= 0x7f || c >= 0xe0 || intSize(c) != 0:
			r.Int()
		case (c >= 0xa0 && c <= 0xbf) || (c >= Str8 && c <= Str32) || (c >= Bin8 && c <= Bin32):
			r.Bytes()
		default:
			return
		}
		if r.Err() == nil && r.Offset() != end {
			t.Fatalf("typed read ended at %d, Skip at %d", r.Offset(), end)
		}
	})
}
