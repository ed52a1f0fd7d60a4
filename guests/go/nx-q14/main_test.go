package main

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// bid is the first bid of nexmark's default stream (nexmark.AppendJSON).
const bid = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`

// b is a bid of the given price, time and raw extra.
func b(price int64, t int64, extra string) string {
	return `{"auction":1,"bidder":2,"price":` + strconv.FormatInt(price, 10) + `,"dateTime":` + strconv.FormatInt(t, 10) + `,"extra":` + extra + `}`
}

// row is the output for b(price, t, extra).
func row(thousandths string, kind string, t int64, extra string, c int) string {
	return `{"auction":1,"bidder":2,"price":` + thousandths + `,"bidTimeType":"` + kind + `","dateTime":` + strconv.FormatInt(t, 10) +
		`,"extra":` + extra + `,"c_counts":` + strconv.Itoa(c) + `}`
}

func TestQ14(t *testing.T) {
	const h = 3_600_000
	tests := []struct {
		name, value string
		code        int
		want        string // the output value, "" for none, or the failure reason
	}{
		{"nexmark bid", bid, 0, `{"auction":1000,"bidder":1001,"price":29537240.908,"bidTimeType":"nightTime","dateTime":1436918400000,` +
			`"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM","c_counts":2}`},
		{"just above the low bound", b(1_101_322, 8*h, `"c"`), 0, row("1000000.376", "dayTime", 8*h, `"c"`, 1)},
		{"just below it", b(1_101_321, 8*h, `"c"`), 0, ""},
		{"just below the high bound", b(55_066_079, 18*h+h-1, `""`), 0, row("49999999.732", "dayTime", 19*h-1, `""`, 0)},
		{"just above it", b(55_066_080, 8*h, `""`), 0, ""},
		{"three decimals kept", b(2_000_000, 7*h, `""`), 0, row("1816000.000", "otherTime", 7*h, `""`, 0)},
		{"negative", b(-2_000_000, 0, `""`), 0, ""},
		{"overflowing product", b(9223372036854775807, 0, `""`), 0, ""},
		{"product wrapping into the range", b(20315797440208758, 0, `""`), 0, ""},
		{"19 h", b(2_000_000, 19*h, `""`), 0, row("1816000.000", "otherTime", 19*h, `""`, 0)},
		{"20 h", b(2_000_000, 20*h, `""`), 0, row("1816000.000", "nightTime", 20*h, `""`, 0)},
		{"6 h", b(2_000_000, 7*h-1, `""`), 0, row("1816000.000", "nightTime", 7*h-1, `""`, 0)},
		{"before 1970", b(2_000_000, -1, `""`), 0, row("1816000.000", "nightTime", -1, `""`, 0)},
		{"before 1970, day", b(2_000_000, -12*h, `""`), 0, row("1816000.000", "dayTime", -12*h, `""`, 0)},
		{"escapes", b(2_000_000, 0, `"c\u0063\u006C\u001c\\u0063\\c\"c"`), 0,
			row("1816000.000", "nightTime", 0, `"c\u0063\u006C\u001c\\u0063\\c\"c"`, 4)},
		{"upper case C", b(2_000_000, 0, `"CcC"`), 0, row("1816000.000", "nightTime", 0, `"CcC"`, 1)},
		{"any layout", ` {"extra":"cc", "price" : 2000000 ,"bidder":2,"dateTime":0,"auction":1} `, 0,
			row("1816000.000", "nightTime", 0, `"cc"`, 2)},
		{"person", `{"id":1,"name":"n","emailAddress":"e"}`, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"no extra, not selected", `{"auction":1,"bidder":2,"price":1,"dateTime":4}`, eddytest.BadInput, `no "extra" member`},
		{"extra not a string", `{"auction":1,"bidder":2,"price":3,"dateTime":4,"extra":null}`, eddytest.BadInput, `"extra" is not a string`},
		{"string price", `{"auction":1,"bidder":2,"price":"3","dateTime":4,"extra":""}`, eddytest.BadInput, `"price" is not an integer`},
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
			if tt.want == "" {
				if len(got.Records) != 0 {
					t.Fatalf("kept: %s", got.Records[0].Value)
				}
				return
			}
			if len(got.Records) != 1 {
				t.Fatalf("%d outputs", len(got.Records))
			}
			out := got.Records[0]
			if string(out.Value) != tt.want {
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

// TestCountC compares countC with counting in the unescaped string, on
// random strings of 'c', other letters, escapes and non-ASCII text, of
// every length around the word boundaries.
func TestCountC(t *testing.T) {
	parts := []string{"c", "a", "C", `\\`, `\"`, `\n`, `\u0063`, `\u00e7`, `\u006c`, `\u001c`, "ç", "\u4e2d", `\ud83d\ude00`}
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 2000 {
		var raw strings.Builder
		for range n % 80 {
			raw.WriteString(parts[r.IntN(len(parts))])
		}
		var s string
		if err := json.Unmarshal([]byte(`"`+raw.String()+`"`), &s); err != nil {
			t.Fatal(err)
		}
		if got, want := countC([]byte(raw.String())), strings.Count(s, "c"); got != want {
			t.Fatalf("countC(%s) = %d, want %d", raw.String(), got, want)
		}
	}
	for n := range 100 {
		s := strings.Repeat("xc", n)[:n]
		if got, want := count([]byte(s), 'c'), strings.Count(s, "c"); got != want {
			t.Fatalf("count(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(bid)}
	calc(r)
	if n := testing.AllocsPerRun(100, func() { calc(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

func BenchmarkCalc(b *testing.B) {
	r := eddy.Record{Value: []byte(bid)}
	for b.Loop() {
		calc(r)
	}
}
