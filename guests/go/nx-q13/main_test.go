package main

import (
	"encoding/json"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// bid is the first bid of nexmark's default stream (nexmark.AppendJSON).
const bid = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`

func TestKey(t *testing.T) {
	tests := []struct {
		name, value string
		code        int
		want        string // the key, or the failure reason
	}{
		{"nexmark bid", bid, 0, "1000"},
		{"modulo", `{"auction":1234567,"bidder":1}`, 0, "4567"},
		{"multiple", `{"auction":20000,"bidder":1}`, 0, "0"},
		{"negative keeps its sign", `{"auction":-3,"bidder":1}`, 0, "-3"},
		{"negative multiple", `{"auction":-10000,"bidder":1}`, 0, "0"},
		{"auction", `{"id":1,"seller":2}`, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"no auction", `{"bidder":1}`, eddytest.BadInput, `no "auction" member`},
		{"string auction", `{"bidder":1,"auction":"5"}`, eddytest.BadInput, `"auction" is not an integer`},
		{"not an object", `7`, eddytest.BadInput, "value is not a JSON object"},
		{"invalid", `{"bidder":`, eddytest.BadInput, "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Key(eddy.Record{Key: []byte("k"), Value: []byte(tt.value)})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Code != tt.code {
				t.Fatalf("code %d %q, want %d", r.Code, r.Reason, tt.code)
			}
			if r.Code != 0 {
				if r.Reason != tt.want {
					t.Fatalf("reason %q, want %q", r.Reason, tt.want)
				}
				return
			}
			if string(r.Value) != tt.want {
				t.Fatalf("key %q, want %q", r.Value, tt.want)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	row := []byte(`{"key":1000,"value":"1000"}`)
	tests := []struct {
		name        string
		left, right []byte
		code        int
		want        string // the joined value, "" for none, or the reason
	}{
		{"nexmark bid", []byte(bid), row, 0, `{"auction":1000,"bidder":1001,"price":32530001,"dateTime":1436918400000,"value":"1000"}`},
		{"value as it is", []byte(`{"auction":5,"bidder":6,"price":7,"dateTime":-8}`), []byte(` { "value" : "a\"\u00e9", "key":5 } `), 0,
			`{"auction":5,"bidder":6,"price":7,"dateTime":-8,"value":"a\"\u00e9"}`},
		{"null value", []byte(bid), []byte(`{"key":1000,"value":null}`), 0,
			`{"auction":1000,"bidder":1001,"price":32530001,"dateTime":1436918400000,"value":null}`},
		{"no row", []byte(bid), nil, 0, ""},
		{"no bid", nil, row, 0, ""},
		{"left is an auction", []byte(`{"id":1,"seller":2}`), row, eddytest.BadInput, `left: value is not a bid: no "bidder" member`},
		{"left without price", []byte(`{"auction":5,"bidder":6,"dateTime":8}`), row, eddytest.BadInput, `left: no "price" member`},
		{"left invalid", []byte(`{`), row, eddytest.BadInput, "left: value is not valid JSON"},
		{"right without value", []byte(bid), []byte(`{"key":1000}`), eddytest.BadInput, `right: no "value" member`},
		{"right value a number", []byte(bid), []byte(`{"value":1000}`), eddytest.BadInput, `right: "value" is neither a string nor null`},
		{"right not an object", []byte(bid), []byte(`"1000"`), eddytest.BadInput, "right: value is not a JSON object"},
		{"right invalid", []byte(bid), []byte(`{"value":"x}`), eddytest.BadInput, "right: value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Join(eddytest.JoinItem{Key: []byte("1000"), Left: tt.left, Right: tt.right})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Code != tt.code {
				t.Fatalf("code %d %q, want %d", r.Code, r.Reason, tt.code)
			}
			if r.Code != 0 {
				if r.Reason != tt.want {
					t.Fatalf("reason %q, want %q", r.Reason, tt.want)
				}
				return
			}
			if string(r.Value) != tt.want || tt.want == "" && r.Value != nil {
				t.Fatalf("value %q, want %q", r.Value, tt.want)
			}
			if tt.want != "" && !json.Valid(r.Value) {
				t.Fatal("not JSON")
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(bid)}
	left, right := []byte(bid), []byte(`{"key":1000,"value":"1000"}`)
	key(r)
	join(nil, left, right)
	if n := testing.AllocsPerRun(100, func() { key(r) }); n != 0 {
		t.Errorf("key: %v allocations per record", n)
	}
	if n := testing.AllocsPerRun(100, func() { join(nil, left, right) }); n != 0 {
		t.Errorf("join: %v allocations per record", n)
	}
}
