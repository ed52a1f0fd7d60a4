package main

import (
	"encoding/json"
	"testing"

	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestJoiner(t *testing.T) {
	tests := []struct {
		name        string
		left, right []byte
		code        int
		want        string // "" with code 0: nothing emitted
	}{
		{"both", []byte(`{"a":1}`), []byte(`[1,2]`), 0, `{"left":{"a":1},"right":[1,2]}`},
		{"left only", []byte(`"x"`), nil, 0, `{"left":"x","right":null}`},
		{"right only", nil, []byte(`42`), 0, `{"left":null,"right":42}`},
		{"json null side", []byte(`null`), []byte(`true`), 0, `{"left":null,"right":true}`},
		{"whitespace kept", []byte(" 1 "), []byte(`2`), 0, `{"left": 1 ,"right":2}`},
		{"neither", nil, nil, 0, ""},
		{"bad left", []byte(`{`), []byte(`1`), eddytest.BadInput, ""},
		{"bad right", []byte(`1`), []byte(`nope`), eddytest.BadInput, ""},
		{"empty side", []byte{}, []byte(`1`), eddytest.BadInput, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Join(eddytest.JoinItem{Key: []byte("k"), Left: tt.left, Right: tt.right})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Code != tt.code || string(r.Value) != tt.want {
				t.Fatalf("code %d %q value %q; want %d %q", r.Code, r.Reason, r.Value, tt.code, tt.want)
			}
			if tt.want == "" && r.Value != nil {
				t.Fatal("emitted a value")
			}
			if tt.want != "" && !json.Valid(r.Value) {
				t.Fatal("output is not JSON")
			}
		})
	}
}

func TestJoinerBatch(t *testing.T) {
	res, err := eddytest.Join(
		eddytest.JoinItem{Key: []byte("a"), Left: []byte(`1`)},
		eddytest.JoinItem{Key: []byte("b"), Right: []byte(`2`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	// The reused buffer does not leak one result into the other.
	if string(res[0].Value) != `{"left":1,"right":null}` || string(res[1].Value) != `{"left":null,"right":2}` {
		t.Fatalf("results %q %q", res[0].Value, res[1].Value)
	}
}
