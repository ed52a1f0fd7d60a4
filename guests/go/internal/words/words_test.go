package words

import (
	"bytes"
	"testing"
)

func split(s []byte) [][]byte {
	var out [][]byte
	for w, i := Next(s, 0); w != nil; w, i = Next(s, i) {
		out = append(out, w)
	}
	return out
}

func TestNext(t *testing.T) {
	for _, s := range []string{"", "   ", "a", " a  bb\tccc\n", "x\u00a0y\u2003z", "straße  ist\u3000lang", "a\xffb c", "\u0085a"} {
		got, want := split([]byte(s)), bytes.Fields([]byte(s))
		if len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: %q, want %q", s, got, want)
			}
		}
	}
	if First([]byte("  hello world")) == nil || string(First([]byte("  hello world"))) != "hello" || First([]byte(" \t")) != nil {
		t.Fatal("First")
	}
}

func FuzzNext(f *testing.F) {
	f.Add([]byte("a b\u00a0c \xff"))
	f.Fuzz(func(t *testing.T, s []byte) {
		got, want := split(s), bytes.Fields(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: %q, want %q", s, got, want)
			}
		}
	})
}
