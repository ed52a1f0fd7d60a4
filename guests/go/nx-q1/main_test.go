package main

import (
	"math"
	"strconv"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// bid is the first bid of nexmark's default stream (nexmark.AppendJSON).
const bid = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`

func TestQ1(t *testing.T) {
	tests := []struct {
		name, value string
		null        bool
		code        int
		want        string // the output value, or the failure reason
	}{
		{"nexmark bid", bid, false, 0,
			`{"auction":1000,"bidder":1001,"price":28951700,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`},
		{"rounds towards zero", `{"bidder":1,"price":-7}`, false, 0, `{"bidder":1,"price":-6}`},
		{"small", `{"bidder":1,"price":1}`, false, 0, `{"bidder":1,"price":0}`},
		{"white space and order kept", ` { "price" : 100 ,"x":[1,{"price":5}], "bidder":2 } `, false, 0,
			` { "price" : 89 ,"x":[1,{"price":5}], "bidder":2 } `},
		{"last of repeated prices", `{"bidder":1,"price":100,"price":200}`, false, 0, `{"bidder":1,"price":100,"price":178}`},
		{"int64 arithmetic wraps", `{"bidder":1,"price":9223372036854775807}`, false, 0,
			`{"bidder":1,"price":` + strconv.FormatInt(wrapped(math.MaxInt64), 10) + `}`},
		{"person", `{"id":1,"name":"n","emailAddress":"e"}`, false, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"auction", `{"id":1,"seller":2}`, false, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"no price", `{"bidder":1}`, false, eddytest.BadInput, `no "price" member`},
		{"fraction", `{"bidder":1,"price":1.5}`, false, eddytest.BadInput, `"price" is not an integer`},
		{"string price", `{"bidder":1,"price":"5"}`, false, eddytest.BadInput, `"price" is not an integer`},
		{"too large", `{"bidder":1,"price":9223372036854775808}`, false, eddytest.BadInput, `"price" is not an integer`},
		{"array", `[1]`, false, eddytest.BadInput, "value is not a JSON object"},
		{"truncated", bid[:100], false, eddytest.BadInput, "value is not valid JSON"},
		{"null value", ``, true, eddytest.BadInput, "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eddy.Record{Key: []byte("1000"), Value: []byte(tt.value), Timestamp: 9,
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
			if tt.code != 0 {
				if got.Reason != tt.want {
					t.Fatalf("reason %q, want %q", got.Reason, tt.want)
				}
				return
			}
			out := got.Records[0]
			if len(got.Records) != 1 || string(out.Value) != tt.want {
				t.Fatalf("output %q, want %q", out.Value, tt.want)
			}
			if string(out.Key) != "1000" || out.Timestamp != 9 || len(out.Headers) != 1 {
				t.Fatalf("key, timestamp or headers changed: %+v", out)
			}
		})
	}
}

// wrapped is price*89/100 in int64 arithmetic, which wraps.
func wrapped(price int64) int64 { return price * 89 / 100 }

func TestQ1Batch(t *testing.T) {
	res, err := eddytest.Process(
		eddy.Record{Value: []byte(`{"bidder":1,"price":1000}`)},
		eddy.Record{Value: []byte(`nope`)},
		eddy.Record{Value: []byte(`{"bidder":1,"price":10}`)},
	)
	if err != nil {
		t.Fatal(err)
	}
	if string(res[0].Records[0].Value) != `{"bidder":1,"price":890}` || res[1].Code != eddytest.BadInput ||
		string(res[2].Records[0].Value) != `{"bidder":1,"price":8}` {
		t.Fatalf("results %+v", res)
	}
}

func TestConvertZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(bid)}
	convert(r)
	if n := testing.AllocsPerRun(100, func() { convert(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

func BenchmarkConvert(b *testing.B) {
	r := eddy.Record{Value: []byte(bid)}
	for b.Loop() {
		convert(r)
	}
}
