package main

import (
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		value []byte
		want  []string
	}{
		{"words", []byte("the quick  brown\tfox\n"), []string{"the", "quick", "brown", "fox"}},
		{"one", []byte("word"), []string{"word"}},
		{"unicode space", []byte("a\u00a0b\u3000c"), []string{"a", "b", "c"}},
		{"empty", []byte{}, nil},
		{"blank", []byte(" \t\n "), nil},
		{"null", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := eddy.Record{Key: []byte("k"), Value: tt.value, Timestamp: 42, Headers: []eddy.Header{{Key: "h"}}}
			res, err := eddytest.Process(in)
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Code != 0 {
				t.Fatalf("code %d: %s", res[0].Code, res[0].Reason)
			}
			var got []string
			for _, r := range res[0].Records {
				if string(r.Key) != "k" || r.Timestamp != 42 || r.Headers != nil {
					t.Fatalf("output record %+v", r)
				}
				got = append(got, string(r.Value))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitBatch(t *testing.T) {
	res, err := eddytest.Process(
		eddy.Record{Key: []byte("a"), Value: []byte("x y"), Timestamp: 1},
		eddy.Record{Key: []byte("b"), Value: []byte(""), Timestamp: 2},
		eddy.Record{Key: []byte("c"), Value: []byte("z"), Timestamp: 3},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Records) != 2 || len(res[1].Records) != 0 || string(res[2].Records[0].Value) != "z" ||
		res[2].Records[0].Timestamp != 3 {
		t.Fatalf("results %+v", res)
	}
}
