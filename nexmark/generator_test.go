package nexmark

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/nexmark")

const goldenEvents = "../testdata/nexmark/events.golden"

func newGen(t testing.TB, cfg Config) *Generator {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func generate(t testing.TB, cfg Config) []Event {
	t.Helper()
	g := newGen(t, cfg)
	var evs []Event
	for {
		ev, ok := g.Next()
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

func defaultN(n int64) Config {
	cfg := DefaultConfig()
	cfg.Events = n
	return cfg
}

// goldenLines renders events as "number time kind key json" lines.
func goldenLines(evs []Event) []byte {
	var b bytes.Buffer
	for _, ev := range evs {
		fmt.Fprintf(&b, "%d %d %s %d ", ev.Number, ev.Time, ev.Kind(), ev.Key())
		b.Write(AppendJSON(nil, ev))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestGolden pins the first 60 events of the default configuration (a
// person, three auctions and the first bids, then the next person).
// Regenerate with go test ./nexmark -run TestGolden -rewrite.
func TestGolden(t *testing.T) {
	got := goldenLines(generate(t, defaultN(60)))
	if *rewrite {
		if err := os.WriteFile(goldenEvents, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenEvents)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\ngot  %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}

// TestBeamPublished compares the first person, auction and bid with the
// ones Apache Beam's Java generator produced, as quoted (their extra fields
// shortened in the middle, their times from a wall clock) in the docstring
// of ParseJsonEventFn in Beam's
// sdks/python/apache_beam/testing/benchmarks/nexmark/nexmark_util.py.
func TestBeamPublished(t *testing.T) {
	evs := generate(t, defaultN(5))
	p, a, b := evs[0].Person, evs[1].Auction, evs[4].Bid
	if p == nil || a == nil || b == nil {
		t.Fatalf("kinds %v %v %v, want person, auction, bid", evs[0].Kind(), evs[1].Kind(), evs[4].Kind())
	}
	wantP := Person{ID: 1000, Name: "Peter Jones", EmailAddress: "nhd@xcat.com", CreditCard: "7241 7320 9143 4888", City: "Portland", State: "WY"}
	gotP := *p
	gotP.DateTime, gotP.Extra = 0, ""
	if gotP != wantP {
		t.Errorf("person %+v, want %+v", gotP, wantP)
	}
	wantA := Auction{ID: 1000, ItemName: "wkx mgee", Description: "eszpqxtdxrvwmmywkmogoahf", InitialBid: 28873, Reserve: 29448, Seller: 1000, Category: 13}
	gotA := *a
	gotA.DateTime, gotA.Expires, gotA.Extra = 0, 0, ""
	if gotA != wantA {
		t.Errorf("auction %+v, want %+v", gotA, wantA)
	}
	if b.Auction != 1000 || b.Bidder != 1001 || b.Price != 32530001 {
		t.Errorf("bid %+v, want auction 1000, bidder 1001, price 32530001", *b)
	}
	for _, c := range []struct{ got, prefix, suffix string }{
		{p.Extra, "WN_HS_bnp", `VQ\[[`},
		{a.Extra, "zcu", "piz"},
		{b.Extra, "fdiysaV^]NLVsbolvyqwgticfdrwdyiyof", "WPYTOuwogvszlxjrcNOORM"},
	} {
		if !strings.HasPrefix(c.got, c.prefix) || !strings.HasSuffix(c.got, c.suffix) {
			t.Errorf("extra %q, want %q...%q", c.got, c.prefix, c.suffix)
		}
	}
}

func TestDeterminism(t *testing.T) {
	cfg := defaultN(3000)
	a, b := generate(t, cfg), generate(t, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two generators of one config differ")
	}
	g := newGen(t, cfg)
	for _, n := range []int64{2999, 0, 1234, 49, 50} {
		if got := g.At(n); !reflect.DeepEqual(got, a[n]) {
			t.Fatalf("At(%d) = %+v, want %+v", n, got, a[n])
		}
	}

	// Another seed: same kinds, IDs and times, other values.
	cfg.Seed = 42
	c := generate(t, cfg)
	same := 0
	for i := range a {
		if a[i].Kind() != c[i].Kind() || a[i].Time != c[i].Time {
			t.Fatalf("event %d: seed changed kind or time", i)
		}
		if a[i].Person != nil && a[i].Person.ID != c[i].Person.ID || a[i].Auction != nil && a[i].Auction.ID != c[i].Auction.ID {
			t.Fatalf("event %d: seed changed the ID", i)
		}
		if bytes.Equal(AppendJSON(nil, a[i]), AppendJSON(nil, c[i])) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of %d events identical under another seed", same, len(a))
	}
}

func TestSplitAndSeek(t *testing.T) {
	all := generate(t, defaultN(1001))
	g := newGen(t, defaultN(1001))
	g.Next()
	g.Next()
	for _, parts := range []int{1, 2, 3, 7, 999, 2000} {
		var got []Event
		for _, p := range g.Split(parts) {
			for {
				ev, ok := p.Next()
				if !ok {
					break
				}
				got = append(got, ev)
			}
		}
		if !reflect.DeepEqual(got, all[2:]) {
			t.Fatalf("Split(%d): the parts' events differ from the whole's", parts)
		}
	}
	if ev, _ := g.Next(); ev.Number != 2 {
		t.Fatalf("Split moved the generator: next is %d", ev.Number)
	}

	parts := g.Split(3)
	p := parts[1]
	p.SeekTo(0) // clamped to the part's start
	if ev, _ := p.Next(); ev.Number != parts[0].Remaining()+3 {
		t.Fatalf("SeekTo(0) on a part went to %d", ev.Number)
	}
	g.SeekTo(1000)
	if ev, ok := g.Next(); !ok || !reflect.DeepEqual(ev, all[1000]) {
		t.Fatalf("SeekTo(1000): %+v", ev)
	}
	if _, ok := g.Next(); ok {
		t.Fatal("Next after the last event")
	}
	g.SeekTo(5000)
	if g.Remaining() != 0 {
		t.Fatal("SeekTo past the end left events")
	}
}

func TestProportions(t *testing.T) {
	const n = 50_000
	counts := map[Kind]int{}
	nextPerson, nextAuction := int64(FirstPersonID), int64(FirstAuctionID)
	var lastAuction int64 = -1
	for _, ev := range generate(t, defaultN(n)) {
		counts[ev.Kind()]++
		switch {
		case ev.Person != nil:
			if ev.Person.ID != nextPerson {
				t.Fatalf("event %d: person %d, want %d", ev.Number, ev.Person.ID, nextPerson)
			}
			nextPerson++
		case ev.Auction != nil:
			a := ev.Auction
			if a.ID != nextAuction {
				t.Fatalf("event %d: auction %d, want %d", ev.Number, a.ID, nextAuction)
			}
			nextAuction++
			lastAuction = a.ID
			if a.Seller < FirstPersonID || a.Seller >= nextPerson+personIDLead {
				t.Fatalf("event %d: seller %d beyond the persons so far", ev.Number, a.Seller)
			}
			if a.Category < FirstCategoryID || a.Category >= FirstCategoryID+numCategories {
				t.Fatalf("event %d: category %d", ev.Number, a.Category)
			}
			if a.Expires <= a.DateTime || a.Reserve < a.InitialBid {
				t.Fatalf("event %d: bad auction %+v", ev.Number, *a)
			}
		case ev.Bid != nil:
			b := ev.Bid
			if b.Auction < FirstAuctionID || b.Auction > lastAuction+auctionIDLead {
				t.Fatalf("event %d: bid on auction %d, last is %d", ev.Number, b.Auction, lastAuction)
			}
			if b.Bidder < FirstPersonID || b.Bidder >= nextPerson+personIDLead {
				t.Fatalf("event %d: bidder %d beyond the persons so far", ev.Number, b.Bidder)
			}
			if b.Price < 100 || b.Price > 100_000_000 {
				t.Fatalf("event %d: price %d outside $1..$1M", ev.Number, b.Price)
			}
		}
	}
	if counts[KindPerson] != 1000 || counts[KindAuction] != 3000 || counts[KindBid] != 46000 {
		t.Fatalf("counts %v, want 1000 persons, 3000 auctions, 46000 bids", counts)
	}
}

// TestSizes checks that the Extra padding brings Beam's size estimate of
// each kind to its configured average.
func TestSizes(t *testing.T) {
	var sum, num [4]float64
	for _, ev := range generate(t, defaultN(50_000)) {
		var size int
		switch {
		case ev.Person != nil:
			p := ev.Person
			size = 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + len(p.Extra)
		case ev.Auction != nil:
			a := ev.Auction
			size = 8 + len(a.ItemName) + len(a.Description) + 40 + len(a.Extra)
		case ev.Bid != nil:
			size = 32 + len(ev.Bid.Extra)
		}
		sum[ev.Kind()] += float64(size)
		num[ev.Kind()]++
	}
	cfg := DefaultConfig()
	for k, want := range map[Kind]int{KindPerson: cfg.AvgPersonByteSize, KindAuction: cfg.AvgAuctionByteSize, KindBid: cfg.AvgBidByteSize} {
		avg := sum[k] / num[k]
		if avg < 0.97*float64(want) || avg > 1.03*float64(want) {
			t.Errorf("%v: average size %.1f, want about %d", k, avg, want)
		}
	}
}

func TestEventTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		// want is the time of event n, relative to the base time.
		want func(n int64) int64
	}{
		{"default 10000/s", func(*Config) {}, func(n int64) int64 { return n / 10 }},
		{"1000/s", func(c *Config) { c.FirstEventRate, c.NextEventRate = 1000, 1000 }, func(n int64) int64 { return n }},
		{"3/s", func(c *Config) { c.FirstEventRate, c.NextEventRate = 3, 3 }, func(n int64) int64 { return n * 333333 / 1000 }},
		{"two generators", func(c *Config) { c.EventGenerators = 2 }, func(n int64) int64 { return n / 5 }},
		{"base time", func(c *Config) { c.BaseTime = 0 }, func(n int64) int64 { return n/10 - BaseTime }},
		{
			// 2 s at 1000/s (2000 events, 2000 ms), then 2 s at 500/s
			// (1000 events, 2000 ms), repeating.
			"square", func(c *Config) { c.FirstEventRate, c.NextEventRate, c.RatePeriodSec = 1000, 500, 4 },
			func(n int64) int64 {
				epoch, k := n/3000, n%3000
				if k < 2000 {
					return epoch*4000 + k
				}
				return epoch*4000 + 2000 + (k-2000)*2
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultN(20_000)
			tc.cfg(&cfg)
			g := newGen(t, cfg)
			for n := int64(0); n < cfg.Events; n++ {
				ev := g.At(n)
				if want := BaseTime + tc.want(n); ev.Time != want {
					t.Fatalf("event %d at %d, want %d", n, ev.Time, want)
				}
				if k := ev.Kind(); k == KindBid && ev.Bid.DateTime != ev.Time || k == KindAuction && ev.Auction.DateTime != ev.Time || k == KindPerson && ev.Person.DateTime != ev.Time {
					t.Fatalf("event %d: payload time differs from event time", n)
				}
			}
		})
	}
}

func TestOutOfOrder(t *testing.T) {
	const group = 10
	cfg := defaultN(5000)
	cfg.FirstEventRate, cfg.NextEventRate = 1000, 1000 // 1 ms apart
	cfg.OutOfOrderGroupSize = group
	evs := generate(t, cfg)
	inOrder := 0
	for base := 0; base < len(evs); base += group {
		seen := map[int64]bool{}
		for i := base; i < base+group; i++ {
			seen[evs[i].Time] = true
			if i > base && evs[i].Time > evs[i-1].Time {
				inOrder++
			}
		}
		for d := int64(0); d < group; d++ {
			if !seen[BaseTime+int64(base)+d] {
				t.Fatalf("group at %d: times %v are not a permutation of the group's", base, seen)
			}
		}
	}
	if inOrder == len(evs)-len(evs)/group {
		t.Fatal("out-of-order groups left every event in order")
	}
	// The kind follows the shuffled number: still 1:3:46.
	counts := map[Kind]int{}
	for _, ev := range evs {
		counts[ev.Kind()]++
	}
	if counts[KindPerson] != 100 || counts[KindAuction] != 300 {
		t.Fatalf("counts %v", counts)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
	}{
		{"negative events", func(c *Config) { c.Events = -1 }},
		{"negative first id", func(c *Config) { c.FirstEventID = -1 }},
		{"zero rate", func(c *Config) { c.FirstEventRate = 0 }},
		{"no period", func(c *Config) { c.NextEventRate, c.RatePeriodSec = 5000, 0 }},
		{"no generators", func(c *Config) { c.EventGenerators = 0 }},
		{"no people", func(c *Config) { c.NumActivePeople = 0 }},
		{"no auctions", func(c *Config) { c.NumInFlightAuctions = 0 }},
		{"zero ratio", func(c *Config) { c.HotBiddersRatio = 0 }},
		{"negative size", func(c *Config) { c.AvgBidByteSize = -1 }},
		{"zero group", func(c *Config) { c.OutOfOrderGroupSize = 0 }},
		{"empty step", func(c *Config) { c.FirstEventRate, c.NextEventRate, c.RatePeriodSec, c.EventGenerators = 1, 2, 1, 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.cfg(&cfg)
			if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %v, want ErrInvalidConfig", err)
			}
			if _, err := NewGenerator(cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewGenerator: %v, want ErrInvalidConfig", err)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestEndless(t *testing.T) {
	g := newGen(t, DefaultConfig())
	g.SeekTo(1 << 40)
	ev, ok := g.Next()
	if !ok || ev.Number != 1<<40 || ev.Time != BaseTime+(1<<40)/10 {
		t.Fatalf("event 2^40 of an endless generator: %v %+v", ok, ev)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Split of an endless generator did not panic")
		}
	}()
	g.Split(2)
}

// TestSplitConcurrent runs the parts of a split in parallel (they share
// only the read-only channel table); run it with -race.
func TestSplitConcurrent(t *testing.T) {
	all := generate(t, defaultN(20_000))
	parts := newGen(t, defaultN(20_000)).Split(4)
	got := make([][]Event, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() {
			for ev, ok := p.Next(); ok; ev, ok = p.Next() {
				got[i] = append(got[i], ev)
			}
		})
	}
	wg.Wait()
	if !reflect.DeepEqual(slices.Concat(got...), all) {
		t.Fatal("parallel parts differ from the serial stream")
	}
}

func TestAtNegative(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("At(-1) did not panic")
		}
	}()
	newGen(t, DefaultConfig()).At(-1)
}
