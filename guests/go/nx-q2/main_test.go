package main

import (
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// A bid on auction 1107 = 9×123 in nexmark.AppendJSON's layout.
const bid = `{"auction":1107,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z"}`

func TestQ2(t *testing.T) {
	tests := []struct {
		name, value string
		null        bool
		code        int
		want        string // the output value ("" none), or the failure reason
	}{
		{"selected", bid, false, 0, `{"auction":1107,"price":32530001}`},
		{"not selected", `{"auction":1108,"bidder":1,"price":5}`, false, 0, ""},
		{"auction 0", `{"auction":0,"bidder":1,"price":5}`, false, 0, `{"auction":0,"price":5}`},
		{"negative", `{"auction":-246,"bidder":1,"price":-0}`, false, 0, `{"auction":-246,"price":0}`},
		{"any order, white space", `{ "price" : 7, "bidder":1, "auction" : 123 }`, false, 0, `{"auction":123,"price":7}`},
		{"last of repeated", `{"auction":1,"bidder":1,"price":7,"auction":246}`, false, 0, `{"auction":246,"price":7}`},
		{"person dropped", `{"id":123,"name":"n"}`, false, 0, ""},
		{"auction dropped", `{"id":123,"itemName":"i","seller":1}`, false, 0, ""},
		{"other object dropped", `{"auction":123}`, false, 0, ""},
		{"no auction", `{"bidder":1,"price":7}`, false, eddytest.BadInput, `no "auction" member`},
		{"bad price, not selected", `{"auction":1,"bidder":1,"price":1e3}`, false, eddytest.BadInput, `"price" is not an integer`},
		{"bad auction", `{"auction":"123","bidder":1,"price":1}`, false, eddytest.BadInput, `"auction" is not an integer`},
		{"not an object", `"bid"`, false, eddytest.BadInput, "value is not a JSON object"},
		{"invalid", `{"auction":123,`, false, eddytest.BadInput, "value is not valid JSON"},
		{"null value", ``, true, eddytest.BadInput, "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eddy.Record{Key: []byte("k"), Value: []byte(tt.value), Timestamp: 9,
				Headers: []eddy.Header{{Key: "h", Value: []byte("v")}}}
			if tt.null {
				r.Value = nil
			}
			res, err := eddytest.Process(r)
			if err != nil {
				t.Fatal(err)
			}
			got := res[0]
			if got.Code != tt.code {
				t.Fatalf("code %d (%s), want %d", got.Code, got.Reason, tt.code)
			}
			switch {
			case tt.code != 0:
				if got.Reason != tt.want {
					t.Fatalf("reason %q, want %q", got.Reason, tt.want)
				}
			case tt.want == "":
				if len(got.Records) != 0 {
					t.Fatalf("not dropped: %q", got.Records[0].Value)
				}
			default:
				out := got.Records
				if len(out) != 1 || string(out[0].Value) != tt.want {
					t.Fatalf("outputs %+v, want %s", out, tt.want)
				}
				if string(out[0].Key) != "k" || out[0].Timestamp != 9 || len(out[0].Headers) != 1 {
					t.Fatalf("key, timestamp or headers changed: %+v", out[0])
				}
			}
		})
	}
}

func TestSelectZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(bid)}
	selectBid(r)
	if n := testing.AllocsPerRun(100, func() { selectBid(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}
