package main

import (
	"encoding/json"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// bid is the first bid of nexmark's default stream (nexmark.AppendJSON).
const bid = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`

// b is a bid with the given raw URL.
func b(url string) string {
	return `{"auction":1,"bidder":2,"price":3,"channel":"c","url":` + url + `}`
}

// row is the output for a b with the raw directories d1, d2 and d3.
func row(d1, d2, d3 string) string {
	return `{"auction":1,"bidder":2,"price":3,"channel":"c","dir1":` + d1 + `,"dir2":` + d2 + `,"dir3":` + d3 + `}`
}

func TestQ22(t *testing.T) {
	tests := []struct {
		name, value string
		code        int
		want        string // the output value, or the failure reason
	}{
		{"nexmark bid", bid, 0, `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","dir1":"rvx","dir2":"xssd","dir3":"leql"}`},
		{"empty directory", b(`"https://x/a//"`), 0, row(`"a"`, `""`, `""`)},
		{"last piece", b(`"https://x/a/b/c"`), 0, row(`"a"`, `"b"`, `"c"`)},
		{"two pieces short", b(`"https://x/y"`), 0, row(`"y"`, `null`, `null`)},
		{"three pieces short", b(`"https://x"`), 0, row(`null`, `null`, `null`)},
		{"no slash", b(`"x"`), 0, row(`null`, `null`, `null`)},
		{"empty URL", b(`""`), 0, row(`null`, `null`, `null`)},
		{"only slashes", b(`"/////"`), 0, row(`""`, `""`, `""`)},
		{"escaped slashes", b(`"a:\/\/h\/d\u00e9\/\"q\"\/\\"`), 0, row("\"d\u00e9\"", `"\"q\""`, `"\\"`)},
		{"channel kept", `{"auction":1,"bidder":2,"price":3,"channel":"\u0041","url":"/"}`, 0,
			`{"auction":1,"bidder":2,"price":3,"channel":"\u0041","dir1":null,"dir2":null,"dir3":null}`},
		{"any layout", ` {"url":"a/b/c/d/e/f", "price" : 3 ,"bidder":2,"channel":"c","auction":1} `, 0, row(`"d"`, `"e"`, `"f"`)},
		{"person", `{"id":1,"name":"n","emailAddress":"e"}`, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"no url", `{"auction":1,"bidder":2,"price":3,"channel":"c"}`, eddytest.BadInput, `no "url" member`},
		{"url not a string", `{"auction":1,"bidder":2,"price":3,"channel":"c","url":null}`, eddytest.BadInput, `"url" is not a string`},
		{"no channel", `{"auction":1,"bidder":2,"price":3,"url":""}`, eddytest.BadInput, `no "channel" member`},
		{"array", `[1]`, eddytest.BadInput, "value is not a JSON object"},
		{"truncated", bid[:100], eddytest.BadInput, "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Process(eddy.Record{Key: []byte("1000"), Value: []byte(tt.value), Timestamp: 9,
				Headers: []eddy.Header{{Key: "h", Value: []byte("v")}}})
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
				t.Fatalf("output %s\nwant   %s", out.Value, tt.want)
			}
			if !json.Valid(out.Value) {
				t.Fatal("not JSON")
			}
			if string(out.Key) != "1000" || out.Timestamp != 9 || len(out.Headers) != 1 {
				t.Fatalf("key, timestamp or headers changed: %+v", out)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(bid)}
	dirs(r)
	if n := testing.AllocsPerRun(100, func() { dirs(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}
