package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// upperValue runs the handler on a value and copies the result.
func upperValue(s []byte) []byte {
	r, _ := upper(eddy.Record{Value: s})
	return append([]byte{}, r.Value...)
}

func TestUpperValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"hello", "HELLO"},
		{"Hello, World! 123 az AZ `{@[", "HELLO, WORLD! 123 AZ AZ `{@["},
		{strings.Repeat("abcdefghijklmnopqrstuvwxyz", 9), strings.Repeat("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 9)},
		{"straße", "STRAßE"},
		{"das ist eine lange straße in köln", "DAS IST EINE LANGE STRAßE IN KÖLN"},
		{"ǆemal", "ǄEMAL"},
		{"ﬁx", "ﬁX"},
		{"αβγ ωmega", "ΑΒΓ ΩMEGA"},
		{"abcdefgh\xffijk", "ABCDEFGH\xffIJK"},
		{"ab\xc3", "AB\xc3"},
	}
	for _, tt := range tests {
		if got := string(upperValue([]byte(tt.in))); got != tt.want {
			t.Errorf("upper(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(appendUpperSlow([]byte("p:"), []byte(tt.in))); got != "p:"+tt.want {
			t.Errorf("appendUpperSlow(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzUpper checks the fast and slow paths against bytes.ToUpper on valid
// UTF-8 (bytes.ToUpper replaces invalid bytes, upper keeps them), and that
// they agree with each other on anything.
func FuzzUpper(f *testing.F) {
	f.Add([]byte("hello straße"))
	f.Add([]byte("~`{}[]@az AZ 0123456789 qwertyuiop"))
	f.Fuzz(func(t *testing.T, s []byte) {
		got := upperValue(s)
		if slow := appendUpperSlow(nil, s); !bytes.Equal(got, slow) {
			t.Fatalf("fast %q, slow %q", got, slow)
		}
		if utf8.Valid(s) {
			if want := bytes.ToUpper(s); !bytes.Equal(got, want) {
				t.Fatalf("upper(%q) = %q, want %q", s, got, want)
			}
		}
	})
}

func TestUpperThroughABI(t *testing.T) {
	in := []eddy.Record{
		{Key: []byte("k"), Value: []byte("straße"), Timestamp: 5, Headers: []eddy.Header{{Key: "h", Value: []byte("v")}}},
		{Key: []byte("n"), Value: nil, Timestamp: 6},
		{Key: []byte("e"), Value: []byte{}, Timestamp: 7},
		{Key: []byte("a"), Value: []byte(strings.Repeat("x", 200)), Timestamp: 8},
	}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	if v := res[0].Records[0]; string(v.Value) != "STRAßE" || string(v.Key) != "k" || v.Timestamp != 5 || len(v.Headers) != 1 {
		t.Errorf("record 0: %+v", v)
	}
	if v := res[1].Records[0].Value; v != nil {
		t.Errorf("null value became %q", v)
	}
	if v := res[2].Records[0].Value; v == nil || len(v) != 0 {
		t.Errorf("empty value became %#v", v)
	}
	if v := res[3].Records[0].Value; string(v) != strings.Repeat("X", 200) {
		t.Errorf("record 3: %q", v)
	}
}

func TestUpperZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(strings.Repeat("abc ", 50))}
	upper(r)
	if n := testing.AllocsPerRun(100, func() { upper(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

func BenchmarkUpper(b *testing.B) {
	r := eddy.Record{Value: []byte(strings.Repeat("the quick brown fox ", 10))}
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		upper(r)
	}
}

// TestEmptyStaysEmpty is the regression the conformance suite found: an
// empty value seen before any other must not come back as null.
func TestEmptyStaysEmpty(t *testing.T) {
	buf = nil
	r, err := upper(eddy.Record{Value: []byte{}})
	if err != nil || r.Value == nil || len(r.Value) != 0 {
		t.Fatalf("empty value became %#v, %v", r.Value, err)
	}
}
