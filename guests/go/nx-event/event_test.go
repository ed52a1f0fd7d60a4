package nxevent

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
)

// Events as nexmark.AppendJSON writes them (the first ones of nexmark's
// default stream, testdata/nexmark/events.golden).
const (
	person  = `{"id":1000,"name":"Peter Jones","emailAddress":"nhd@xcat.com","creditCard":"7241 7320 9143 4888","city":"Portland","state":"WY","dateTime":1436918400000,"extra":"WN_HS_bnpkkiwhwana_L^` + "`" + `KZjdgsid` + "`" + `K]MLU[aaOH` + "`" + `ztxbulvlxtkn_ZZ^T\\mqgdjzvlkymsmfrhkfVYSXK_OY[aVYVKa\\X^]RO]OYguwiduWJNQLLaMLHOTaHY_J[YKWaUOSJN_VHWXZ]` + "`" + `SgbnjqeVVQ\\[["}`
	auction = `{"id":1000,"itemName":"wkx mgee","description":"eszpqxtdxrvwmmywkmogoahf","initialBid":28873,"reserve":29448,"dateTime":1436918400000,"expires":1436918400011,"seller":1000,"category":13,"extra":"zcurskufssowmihzpmZHWQM^fnleramznyyqimoheaRSWV^OjtfjhgXRa` + "`" + `[PVHUOMTbrqqzjyztfwnhstxbu]\\V_XPldnjuo^^PJQMnwhlsenoniir^aNZI__IP[QLYPROSNW]HYP\\L]W^PTkfnbtwuqucwreikflftlgtebaurwml^RMRIPqevmpqsnxmcblfvpfeajfopsHS^U[Jzxwajo_W` + "`" + `RXa[XWI[` + "`" + `VXZOR^lghgmwHITMP[dbwdgtPQJYHLjnubcsjgszqvyzeoeqjcbaazmrqamxoxgrjh` + "`" + `L` + "`" + `]_Y^OQM]ItjxtuwZJS[RTmrkpofsnuysxuvwbuzrqkrkkqpiz"}`
	bid     = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`
)

// generalOnly parses doc with the general path alone.
func generalOnly(doc []byte) (Event, error) {
	var ev Event
	ev.doc = doc
	err := ev.general(doc)
	return ev, err
}

// same compares two parses member by member.
func same(t *testing.T, doc []byte, a, b *Event, errA, errB error) {
	t.Helper()
	if errA != errB {
		t.Fatalf("%q: errors %v and %v", doc, errA, errB)
	}
	if errA != nil {
		return
	}
	if a.Kind != b.Kind || a.present != b.present {
		t.Fatalf("%q: kind %d/%d members %b/%b", doc, a.Kind, b.Kind, a.present, b.present)
	}
	for m := range numMembers {
		if string(a.Raw(m)) != string(b.Raw(m)) {
			t.Fatalf("%q: %s %q vs %q", doc, m, a.Raw(m), b.Raw(m))
		}
		va, ea := a.Int(m)
		vb, eb := b.Int(m)
		if va != vb || ea != eb {
			t.Fatalf("%q: Int(%s) %d %v vs %d %v", doc, m, va, ea, vb, eb)
		}
	}
}

func TestParseGolden(t *testing.T) {
	tests := []struct {
		doc  string
		kind Kind
		ints map[Member]int64
		strs map[Member]string
	}{
		{person, KindPerson, map[Member]int64{ID: 1000, DateTime: 1436918400000},
			map[Member]string{Name: `"Peter Jones"`, City: `"Portland"`, State: `"WY"`}},
		{auction, KindAuction, map[Member]int64{ID: 1000, InitialBid: 28873, Reserve: 29448, DateTime: 1436918400000,
			Expires: 1436918400011, Seller: 1000, Category: 13}, map[Member]string{ItemName: `"wkx mgee"`}},
		{bid, KindBid, map[Member]int64{Auction: 1000, Bidder: 1001, Price: 32530001, DateTime: 1436918400000},
			map[Member]string{Channel: `"Facebook"`}},
	}
	for _, tt := range tests {
		var ev Event
		if !ev.fast([]byte(tt.doc)) {
			t.Fatalf("fast path refused %.40s", tt.doc)
		}
		if err := ev.Parse([]byte(tt.doc)); err != nil || ev.Kind != tt.kind {
			t.Fatalf("%.40s: %v kind %d", tt.doc, err, ev.Kind)
		}
		for m, want := range tt.ints {
			if v, err := ev.Int(m); err != nil || v != want {
				t.Errorf("%s = %d %v, want %d", m, v, err, want)
			}
		}
		for m, want := range tt.strs {
			if v, err := ev.Str(m); err != nil || string(v) != want {
				t.Errorf("%s = %s %v, want %s", m, v, err, want)
			}
		}
		g, err := generalOnly([]byte(tt.doc))
		same(t, []byte(tt.doc), &ev, &g, nil, err)
	}
}

// appendString appends s as nexmark.AppendJSON does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c < 0x20:
			dst = fmt.Appendf(dst, `\u%04x`, c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// randomEvent writes a random event in nexmark.AppendJSON's layout.
func randomEvent(r *rand.Rand) []byte {
	num := func() int64 {
		switch r.IntN(6) {
		case 0:
			return int64(r.IntN(10))
		case 1:
			return -r.Int64N(1e6)
		case 2:
			return r.Int64N(1e15) // up to 15 digits: the fast path's limit
		case 3:
			return r.Int64() // beyond it: the general path
		}
		return r.Int64N(1e8)
	}
	str := func() string {
		const alphabet = "abc XYZ\\\"/é\n\x01HIz`^_"
		n := r.IntN(90)
		if r.IntN(4) == 0 {
			n = r.IntN(8)
		}
		var b strings.Builder
		for range n {
			if r.IntN(3) == 0 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte(byte('H' + r.IntN('z'-'H'+1)))
			}
		}
		return b.String()
	}
	var d []byte
	switch r.IntN(3) {
	case 0:
		d = fmt.Appendf(d, `{"auction":%d,"bidder":%d,"price":%d,"channel":`, num(), num(), num())
		d = appendString(d, str())
		d = append(d, `,"url":`...)
		d = appendString(d, str())
		d = fmt.Appendf(d, `,"dateTime":%d,"extra":`, num())
		d = appendString(d, str())
	case 1:
		d = fmt.Appendf(d, `{"id":%d`, num())
		for _, m := range []string{"name", "emailAddress", "creditCard", "city", "state"} {
			d = append(d, `,"`+m+`":`...)
			d = appendString(d, str())
		}
		d = fmt.Appendf(d, `,"dateTime":%d,"extra":`, num())
		d = appendString(d, str())
	default:
		d = fmt.Appendf(d, `{"id":%d,"itemName":`, num())
		d = appendString(d, str())
		d = append(d, `,"description":`...)
		d = appendString(d, str())
		d = fmt.Appendf(d, `,"initialBid":%d,"reserve":%d,"dateTime":%d,"expires":%d,"seller":%d,"category":%d,"extra":`,
			num(), num(), num(), num(), num(), num())
		d = appendString(d, str())
	}
	return append(d, '}')
}

// TestFastMatchesGeneral parses random events in AppendJSON's layout, and
// damaged copies of them, both ways.
func TestFastMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for range 20000 {
		doc := randomEvent(r)
		if r.IntN(3) == 0 {
			// Damage one byte, or cut the document.
			doc = append([]byte(nil), doc...)
			if i := r.IntN(len(doc)); r.IntN(2) == 0 {
				const junk = "{}[]\",:0-9e. \\u\x00x"
				doc[i] = junk[r.IntN(len(junk))]
			} else {
				doc = doc[:i]
			}
		}
		var ev Event
		err := ev.Parse(doc)
		var probe Event
		if probe.fast(doc) {
			fast++
		}
		g, gerr := generalOnly(doc)
		same(t, doc, &ev, &g, err, gerr)
		// Validity is jsonscan's.
		_, _, jerr := jsonscan.Field(doc, "id")
		if jerr != err {
			t.Fatalf("%q: Parse %v, jsonscan %v", doc, err, jerr)
		}
		if err == nil && json.Valid(doc) != true {
			t.Fatalf("%q: accepted, encoding/json refuses", doc)
		}
	}
	if fast < 5000 { // some 6,900: damaged documents and long integers go the general way
		t.Errorf("the fast path took only %d of 20000 documents", fast)
	}
}

func TestGeneral(t *testing.T) {
	tests := []struct {
		name, doc string
		err       error
		kind      Kind
		check     map[Member]string // member -> raw value ("" absent)
	}{
		{"white space", " {\"auction\" : 5 ,\n\"bidder\":\t6, \"price\" : -7 } ", nil, KindBid,
			map[Member]string{Auction: "5", Bidder: "6", Price: "-7", URL: ""}},
		{"any order", `{"price":1,"extra":{"bidder":[1,"}"]},"auction":2,"bidder":"x"}`, nil, KindBid,
			map[Member]string{Extra: `{"bidder":[1,"}"]}`, Bidder: `"x"`}},
		{"duplicate: last wins", `{"bidder":1,"price":1,"price":2}`, nil, KindBid, map[Member]string{Price: "2"}},
		{"escaped key", `{"bidd\u0065r":1,"pr\u0069ce":3}`, nil, KindBid, map[Member]string{Price: "3", Bidder: "1"}},
		{"auction by seller", `{"seller":1}`, nil, KindAuction, nil},
		{"bid wins", `{"seller":1,"name":"n","bidder":2}`, nil, KindBid, nil},
		{"person", `{"emailAddress":"a"}`, nil, KindPerson, nil},
		{"no kind", `{"id":1,"foo":2}`, nil, KindNone, map[Member]string{ID: "1"}},
		{"empty object", `{}`, nil, KindNone, nil},
		{"short", `{"":1}`, nil, KindNone, nil},
		{"array", `[1]`, ErrNotObject, 0, nil},
		{"number", `12`, ErrNotObject, 0, nil},
		{"truncated", `{"bidder":1`, ErrSyntax, 0, nil},
		{"empty", ``, ErrSyntax, 0, nil},
		{"leading zero", `{"bidder":01}`, ErrSyntax, 0, nil},
		{"control byte", "{\"bidder\":\"a\x01\"}", ErrSyntax, 0, nil},
		{"trailing", `{"bidder":1}x`, ErrSyntax, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev Event
			err := ev.Parse([]byte(tt.doc))
			if err != tt.err || err == nil && ev.Kind != tt.kind {
				t.Fatalf("error %v kind %d, want %v %d", err, ev.Kind, tt.err, tt.kind)
			}
			for m, want := range tt.check {
				if got := string(ev.Raw(m)); got != want {
					t.Errorf("%s = %q, want %q", m, got, want)
				}
			}
		})
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		tok  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"7", 7, true}, {"-12", -12, true},
		{"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false}, {"99999999999999999999", 0, false},
		{"1.5", 0, false}, {"1e3", 0, false}, {"1E3", 0, false}, {`"5"`, 0, false}, {"null", 0, false},
		{"-", 0, false}, {"", 0, false}, {"01", 0, false},
	}
	for _, tt := range tests {
		if v, ok := ParseInt([]byte(tt.tok)); v != tt.want || ok != tt.ok {
			t.Errorf("ParseInt(%q) = %d %v, want %d %v", tt.tok, v, ok, tt.want, tt.ok)
		}
	}
	// The fast path's integers, every length.
	for _, v := range []int64{0, 1, 9, 10, 12345678, 99999999, 100000000, 123456789012345, 999999999999999, -1, -87654321, -123456789012345} {
		doc := fmt.Appendf(nil, `{"auction":%d,"bidder":1,"price":1,"channel":"","url":"","dateTime":1,"extra":"xxxxxxxxxxxxxxxxx"}`, v)
		var ev Event
		if !ev.fast(doc) {
			t.Fatalf("fast path refused %s", doc)
		}
		if got, _ := ev.Int(Auction); got != v {
			t.Errorf("%d parsed as %d", v, got)
		}
	}
	for _, v := range []int64{1234567890123456, math.MaxInt64, math.MinInt64} {
		doc := fmt.Appendf(nil, `{"auction":%d,"bidder":1,"price":1,"channel":"","url":"","dateTime":1,"extra":"xxxxxxxxxxxxxxxxx"}`, v)
		var ev Event
		if ev.fast(doc) {
			t.Errorf("fast path took %d digits", len(strconv.FormatInt(v, 10)))
		}
		if err := ev.Parse(doc); err != nil {
			t.Fatal(err)
		}
		if got, err := ev.Int(Auction); got != v || err != nil {
			t.Errorf("%d parsed as %d %v", v, got, err)
		}
	}
}

func TestErrors(t *testing.T) {
	var ev Event
	if err := ev.Parse([]byte(`{"bidder":1,"price":1.5,"name":5}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Int(Price); err == nil || err.Error() != `"price" is not an integer` {
		t.Errorf("Int(price): %v", err)
	}
	if _, err := ev.Int(Auction); err == nil || err.Error() != `no "auction" member` {
		t.Errorf("Int(auction): %v", err)
	}
	if _, err := ev.Str(Name); err == nil || err.Error() != `"name" is not a string` {
		t.Errorf("Str(name): %v", err)
	}
	if ErrSyntax.Error() != "value is not valid JSON" || ErrNotObject.Error() != "value is not a JSON object" {
		t.Error("jsonscan's reasons changed: the C guests (nx-event.h) repeat them")
	}
}

func TestStrEquals(t *testing.T) {
	for _, tt := range []struct {
		tok, s string
		want   bool
	}{{`"OR"`, "OR", true}, {`"\u004fR"`, "OR", true}, {`"O\\R"`, "OR", false}, {`"ORE"`, "OR", false}, {`""`, "", true}} {
		if got := StrEquals([]byte(tt.tok), tt.s); got != tt.want {
			t.Errorf("StrEquals(%s, %q) = %v", tt.tok, tt.s, got)
		}
	}
}

func TestParseZeroAllocs(t *testing.T) {
	var ev Event
	for _, s := range []string{bid, person, auction, `{"x": [1, {"y": "\u0041"}], "bidder" : 1}`} {
		doc := []byte(s)
		if n := testing.AllocsPerRun(100, func() { ev.Parse(doc) }); n != 0 {
			t.Errorf("%.30s: %v allocations", doc, n)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{bid, person, auction, `{"bidder":1}`, `{}`, `[]`, `{"a":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var ev Event
		err := ev.Parse(doc)
		g, gerr := generalOnly(doc)
		same(t, doc, &ev, &g, err, gerr)
		if _, _, jerr := jsonscan.Field(doc, "x"); jerr != err {
			t.Fatalf("Parse %v, jsonscan %v", err, jerr)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for _, doc := range []string{bid, person, auction} {
		b.Run(doc[2:4], func(b *testing.B) {
			var ev Event
			d := []byte(doc)
			for b.Loop() {
				ev.Parse(d)
			}
		})
	}
}

// TestNexmarkGolden parses the first events of nexmark's default stream,
// which must all take the fast path.
func TestNexmarkGolden(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/nexmark/events.golden")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		// number time kind key value
		f := strings.SplitN(strings.TrimSpace(line), " ", 5)
		if len(f) != 5 {
			continue
		}
		doc := []byte(f[4])
		var ev Event
		if !ev.fast(doc) {
			t.Errorf("event %s: fast path refused %s", f[0], doc)
		}
		want := map[string]Kind{"person": KindPerson, "auction": KindAuction, "bid": KindBid}[f[2]]
		if err := ev.Parse(doc); err != nil || ev.Kind != want {
			t.Errorf("event %s: %v kind %d", f[0], err, ev.Kind)
		}
		ts, _ := ev.Int(DateTime)
		if strconv.FormatInt(ts, 10) != f[1] {
			t.Errorf("event %s: dateTime %d", f[0], ts)
		}
	}
}

func TestAppendInt(t *testing.T) {
	vals := []int64{0, 1, -1, 9, 10, 99, 100, 12345678, 99999999, 100000000, 100000001, 1234567890123456,
		9999999999999999, 10000000000000000, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, -100000000}
	for p := int64(1); p > 0 && p < math.MaxInt64/10; p *= 10 {
		vals = append(vals, p, p-1, p+1, -p, -(p - 1))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		vals = append(vals, r.Int64()>>r.IntN(64), -(r.Int64() >> r.IntN(64)))
	}
	for _, v := range vals {
		if got, want := string(AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("AppendInt(%d) = %s", v, got)
		}
	}
	buf := make([]byte, 0, 32)
	if n := testing.AllocsPerRun(100, func() { AppendInt(buf, math.MinInt64) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
