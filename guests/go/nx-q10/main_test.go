package main

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// bid is the first bid of nexmark's default stream (nexmark.AppendJSON).
const bid = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`

func TestQ10(t *testing.T) {
	tests := []struct {
		name, value string
		code        int
		want        string // the output value, or the failure reason
	}{
		{"nexmark bid", bid, 0,
			`{"auction":1000,"bidder":1001,"price":32530001,"dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM","dt":"2015-07-15","hm":"00:00"}`},
		{"any layout, escapes kept", ` { "extra" : "a\"\u00e9" , "dateTime":1456790399999,"price":-1,"bidder":2,"auction":3 } `, 0,
			`{"auction":3,"bidder":2,"price":-1,"dateTime":1456790399999,"extra":"a\"\u00e9","dt":"2016-02-29","hm":"23:59"}`},
		{"before 1970", `{"auction":1,"bidder":2,"price":3,"dateTime":-1,"extra":""}`, 0,
			`{"auction":1,"bidder":2,"price":3,"dateTime":-1,"extra":"","dt":"1969-12-31","hm":"23:59"}`},
		{"year 0", `{"auction":1,"bidder":2,"price":3,"dateTime":-62167219200000,"extra":""}`, 0,
			`{"auction":1,"bidder":2,"price":3,"dateTime":-62167219200000,"extra":"","dt":"0000-01-01","hm":"00:00"}`},
		{"year 9999", `{"auction":1,"bidder":2,"price":3,"dateTime":253402300799999,"extra":""}`, 0,
			`{"auction":1,"bidder":2,"price":3,"dateTime":253402300799999,"extra":"","dt":"9999-12-31","hm":"23:59"}`},
		{"before year 0", `{"auction":1,"bidder":2,"price":3,"dateTime":-62167219200001,"extra":""}`, eddytest.BadInput,
			`"dateTime" is outside the years 0000 to 9999`},
		{"after year 9999", `{"auction":1,"bidder":2,"price":3,"dateTime":253402300800000,"extra":""}`, eddytest.BadInput,
			`"dateTime" is outside the years 0000 to 9999`},
		{"person", `{"id":1,"name":"n","emailAddress":"e"}`, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"no extra", `{"auction":1,"bidder":2,"price":3,"dateTime":4}`, eddytest.BadInput, `no "extra" member`},
		{"extra not a string", `{"auction":1,"bidder":2,"price":3,"dateTime":4,"extra":5}`, eddytest.BadInput, `"extra" is not a string`},
		{"no auction", `{"bidder":2,"price":3,"dateTime":4,"extra":""}`, eddytest.BadInput, `no "auction" member`},
		{"fractional time", `{"auction":1,"bidder":2,"price":3,"dateTime":4.5,"extra":""}`, eddytest.BadInput, `"dateTime" is not an integer`},
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
			if string(out.Key) != "1000" || out.Timestamp != 9 || len(out.Headers) != 1 {
				t.Fatalf("key, timestamp or headers changed: %+v", out)
			}
		})
	}
}

// TestPartitionAgreesWithTime compares appendPartition with the time
// package at the edges of the range, of days, years and centuries, and at
// random times.
func TestPartitionAgreesWithTime(t *testing.T) {
	times := []int64{minTime, minTime + 1, maxTime, maxTime - 1, 0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001}
	for _, y := range []int{0, 1, 99, 100, 399, 400, 1600, 1700, 1900, 1969, 2000, 2015, 2100, 2400, 9999} {
		for _, m := range []time.Month{1, 2, 3, 12} {
			ms := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
			times = append(times, ms, ms-1, time.Date(y, m+1, 0, 23, 59, 59, 999e6, time.UTC).UnixMilli())
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		times = append(times, minTime+r.Int64N(maxTime-minTime+1))
	}
	for _, ms := range times {
		if ms < minTime || ms > maxTime {
			continue
		}
		tm := time.UnixMilli(ms).UTC()
		want := `,"dt":"` + tm.Format("2006-01-02") + `","hm":"` + tm.Format("15:04") + `"`
		if got := string(appendPartition(nil, ms)); got != want {
			t.Fatalf("%d (%s): %s, want %s", ms, strconv.Quote(tm.String()), got, want)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(bid)}
	logRow(r)
	if n := testing.AllocsPerRun(100, func() { logRow(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

func BenchmarkLogRow(b *testing.B) {
	r := eddy.Record{Value: []byte(bid)}
	for b.Loop() {
		logRow(r)
	}
}
