package nexmark

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

// stdPerson, stdAuction and stdBid decode the JSON with encoding/json, as
// an independent check of AppendJSON.
type stdPerson struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	EmailAddress string `json:"emailAddress"`
	CreditCard   string `json:"creditCard"`
	City         string `json:"city"`
	State        string `json:"state"`
	DateTime     int64  `json:"dateTime"`
	Extra        string `json:"extra"`
}

type stdAuction struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"dateTime"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
}

type stdBid struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	Channel  string `json:"channel"`
	URL      string `json:"url"`
	DateTime int64  `json:"dateTime"`
	Extra    string `json:"extra"`
}

func TestJSONRoundTrip(t *testing.T) {
	var buf []byte
	for _, ev := range generate(t, defaultN(20_000)) {
		buf = AppendJSON(buf[:0], ev)
		got, err := Decode(buf)
		if err != nil {
			t.Fatalf("event %d: %v\n%s", ev.Number, err, buf)
		}
		want := ev
		want.Number = 0
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: decoded %+v, want %+v", ev.Number, got, want)
		}
		var std, mine any
		switch {
		case ev.Person != nil:
			var p stdPerson
			std, mine = &p, (*stdPerson)(ev.Person)
		case ev.Auction != nil:
			var a stdAuction
			std, mine = &a, (*stdAuction)(ev.Auction)
		default:
			var b stdBid
			std, mine = &b, (*stdBid)(ev.Bid)
		}
		dec := json.NewDecoder(bytes.NewReader(buf))
		dec.DisallowUnknownFields()
		if err := dec.Decode(std); err != nil {
			t.Fatalf("event %d: encoding/json: %v\n%s", ev.Number, err, buf)
		}
		if !reflect.DeepEqual(std, mine) {
			t.Fatalf("event %d: encoding/json read %+v, want %+v", ev.Number, std, mine)
		}
	}
}

func TestJSONStrings(t *testing.T) {
	for _, s := range []string{"", `"`, `\`, "a\"b\\c", "\x00\x01\x1f\n\r\t", "héllo, 世界 🎉", "\xff\xfe", "</script>&"} {
		b := &Bid{Auction: 1, Bidder: 2, Price: 3, Channel: s, URL: s, DateTime: -4, Extra: s}
		data := b.AppendJSON(nil)
		if !json.Valid(data) && s != "\xff\xfe" {
			t.Errorf("%q: invalid JSON %s", s, data)
		}
		ev, err := Decode(data)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if *ev.Bid != *b {
			t.Errorf("%q: decoded %+v", s, *ev.Bid)
		}
		if s != "\xff\xfe" {
			var std stdBid
			if err := json.Unmarshal(data, &std); err != nil || std.Extra != s {
				t.Errorf("%q: encoding/json read %q, %v", s, std.Extra, err)
			}
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Event // zero: an error is expected
	}{
		{"bid reordered", ` { "dateTime" : 5 , "price":-7, "bidder":2,"auction":1 , "other": [1, {"x": null}, true, 2.5e-3, "s"]} `,
			Event{Time: 5, Bid: &Bid{Auction: 1, Bidder: 2, Price: -7, DateTime: 5}}},
		{"person", `{"id":3,"name":"A B","state":"OR","dateTime":9}`,
			Event{Time: 9, Person: &Person{ID: 3, Name: "A B", State: "OR", DateTime: 9}}},
		{"auction by seller", `{"id":3,"seller":4,"category":10}`,
			Event{Auction: &Auction{ID: 3, Seller: 4, Category: 10}}},
		{"escapes", `{"bidder":1,"extra":"\u00e9\ud83c\udf89\ud800x\"\\\/\b\f\n\r\t"}`,
			Event{Bid: &Bid{Bidder: 1, Extra: "é🎉\ufffdx\"\\/\b\f\n\r\t"}}},
		{"duplicate key", `{"bidder":1,"bidder":2}`, Event{Bid: &Bid{Bidder: 2}}},
		{"int64 range", `{"bidder":-9223372036854775808,"auction":9223372036854775807,"price":-0}`,
			Event{Bid: &Bid{Bidder: math.MinInt64, Auction: math.MaxInt64}}},
		{"underflow", `{"bidder":-9223372036854775809}`, Event{}},
		{"lone minus", `{"bidder":-}`, Event{}},
		{"unknown kind", `{"id":1}`, Event{}},
		{"empty object", `{}`, Event{}},
		{"not an object", `[1]`, Event{}},
		{"fraction", `{"bidder":1.5}`, Event{}},
		{"exponent", `{"bidder":1e3}`, Event{}},
		{"leading zero", `{"bidder":01}`, Event{}},
		{"overflow", `{"bidder":9223372036854775808}`, Event{}},
		{"string for number", `{"bidder":"1"}`, Event{}},
		{"trailing data", `{"bidder":1}x`, Event{}},
		{"trailing comma", `{"bidder":1,}`, Event{}},
		{"unterminated", `{"bidder":1,"extra":"abc`, Event{}},
		{"control char", "{\"bidder\":1,\"extra\":\"a\x01\"}", Event{}},
		{"bad escape", `{"bidder":1,"extra":"\x"}`, Event{}},
		{"bad unicode", `{"bidder":1,"extra":"\u12"}`, Event{}},
		{"bad literal", `{"bidder":1,"x":nul}`, Event{}},
		{"empty", ``, Event{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.in))
			if tc.want.Kind() == 0 {
				if !errors.Is(err, ErrBadJSON) {
					t.Fatalf("Decode = %+v, %v; want ErrBadJSON", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Decode = %+v %+v, want %+v %+v", got, got.Bid, tc.want, tc.want.Bid)
			}
		})
	}
}

func TestDecodeDepth(t *testing.T) {
	deep := `{"bidder":1,"x":`
	for range maxDepth + 2 {
		deep += "["
	}
	if _, err := Decode([]byte(deep)); !errors.Is(err, ErrBadJSON) {
		t.Fatalf("deep nesting: %v", err)
	}
}

func TestRecord(t *testing.T) {
	evs := generate(t, defaultN(5))
	for i, wantKey := range []string{"1000", "1000", "1001", "1002", "1000"} {
		r := Record(evs[i])
		if string(r.Key) != wantKey || r.Timestamp != evs[i].Time || string(r.Value) != string(AppendJSON(nil, evs[i])) {
			t.Fatalf("event %d: record %q %d %s", i, r.Key, r.Timestamp, r.Value)
		}
	}
	if k := (Event{Bid: &Bid{Auction: 77}}).Key(); k != 77 {
		t.Fatalf("bid key %d, want its auction", k)
	}
}

func TestAppendJSONAllocs(t *testing.T) {
	evs := generate(t, defaultN(50))
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		for _, ev := range evs {
			buf = AppendJSON(buf[:0], ev)
			buf = AppendKey(buf, ev)
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendJSON allocates %.1f times per 50 events", allocs)
	}
}

// TestGeneratorAllocs bounds the allocations of generating an event: the
// payload struct and one string for all its text fields (and a few more in
// all for the generator's buffers, which grow now and then: a run of 5,000
// events was once seen to take 10,001).
func TestGeneratorAllocs(t *testing.T) {
	g := newGen(t, DefaultConfig())
	for range 100 { // warm the buffer and the channel table
		g.Next()
	}
	const n = 5000
	allocs := testing.AllocsPerRun(1, func() {
		for range n {
			g.Next()
		}
	})
	if allocs > 2*n+8 {
		t.Fatalf("%.0f allocations for %d events, want at most 2 per event", allocs, n)
	}
}

// FuzzDecode checks that Decode never panics and that what it accepts
// survives an AppendJSON/Decode round trip unchanged.
func FuzzDecode(f *testing.F) {
	g, err := NewGenerator(defaultN(60))
	if err != nil {
		f.Fatal(err)
	}
	for {
		ev, ok := g.Next()
		if !ok {
			break
		}
		f.Add(AppendJSON(nil, ev))
	}
	f.Add([]byte(`{"bidder":1,"extra":"\ud83c\udf89\ud800","x":[{},[],{"a":[1,-2.5E+7]}]}`))
	f.Add([]byte(`{"name":"\u0000"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrBadJSON) {
				t.Fatalf("error %v does not wrap ErrBadJSON", err)
			}
			return
		}
		again, err := Decode(AppendJSON(nil, ev))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", AppendJSON(nil, ev), err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("round trip changed %+v into %+v", ev, again)
		}
	})
}

// BenchmarkGenerate measures generating events and encoding them as record
// values.
func BenchmarkGenerate(b *testing.B) {
	for _, bc := range []struct {
		name   string
		encode bool
	}{{"generate", false}, {"generate+encode", true}} {
		b.Run(bc.name, func(b *testing.B) {
			g := newGen(b, DefaultConfig())
			buf := make([]byte, 0, 4096)
			var bytes int64
			b.ReportAllocs()
			for b.Loop() {
				ev, _ := g.Next()
				if bc.encode {
					buf = AppendKey(buf[:0], ev)
					buf = AppendJSON(buf, ev)
					bytes += int64(len(buf))
				}
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/s, "events/s")
			if bc.encode {
				b.ReportMetric(float64(bytes)/s/1e6, "MB/s")
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	evs := generate(b, defaultN(1000))
	vals := make([][]byte, len(evs))
	for i, ev := range evs {
		vals[i] = AppendJSON(nil, ev)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Decode(vals[i%len(vals)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkAppendJSON(b *testing.B) {
	evs := generate(b, defaultN(1000))
	buf := make([]byte, 0, 4096)
	var n int64
	i := 0
	for b.Loop() {
		buf = AppendJSON(buf[:0], evs[i%len(evs)])
		n += int64(len(buf))
		i++
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/s, "events/s")
	b.ReportMetric(float64(n)/s/1e6, "MB/s")
}
