// Package nxbench runs the Nexmark queries as Eddy pipelines — Wasm guests
// (guests/*/nx-*) or the same logic as native Go functions — in process or
// through Kafka, measures them, and checks their output against the nexmark
// package's reference results. `eddy bench nexmark` is its command line.
package nxbench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
)

// Topics of the events, one per kind.
const (
	TopicPersons  = "persons"
	TopicAuctions = "auctions"
	TopicBids     = "bids"
)

// Query is a Nexmark query as an Eddy pipeline.
type Query struct {
	Name string
	// Steps and Tables are the pipeline's steps and tables in YAML; fn
	// names a function ("nx-q1") and returns what the pipeline file should
	// say for it (a .wasm path or native:NAME).
	Steps  func(fn func(string) string) string
	Tables string
	// Side returns records, by topic, that the run writes before any event:
	// a bounded side input that a table reads (q13). Nil for most queries.
	Side func() map[string][]abi.Record
	// Sources are the topics the pipeline reads.
	Sources []string
	// Check compares the pipeline's output with the reference computed from
	// the events.
	Check func(events []nexmark.Event, out []abi.Record) error
	// Note says how the pipeline differs from the reference's definition,
	// if it does.
	Note string
}

// Queries are the implemented queries, by name.
var Queries = merged(windowQueries, statelessQueries, reportQueries, auctionQueries)

// merged returns the union of ms (their names do not overlap).
func merged(ms ...map[string]Query) map[string]Query {
	all := map[string]Query{}
	for _, m := range ms {
		for n, q := range m {
			all[n] = q
		}
	}
	return all
}

// windowQueries are q0–q3, q5, q7, q8, q11 and q12.
var windowQueries = map[string]Query{
	"q0": {Name: "q0", Sources: []string{TopicPersons, TopicAuctions, TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: pass, kind: map, function: %s}\n", fn("passthrough"))
		},
		Check: func(evs []nexmark.Event, out []abi.Record) error { return sameCount(len(nexmark.Q0(evs)), len(out)) }},
	"q1": {Name: "q1", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: euros, kind: map, function: %s}\n", fn("nx-q1"))
		},
		Check: func(evs []nexmark.Event, out []abi.Record) error {
			return compare(nexmark.Q1(evs), out, func(r abi.Record) (nexmark.Bid, error) {
				ev, err := nexmark.Decode(r.Value)
				if err != nil || ev.Bid == nil {
					return nexmark.Bid{}, fmt.Errorf("not a bid: %s", r.Value)
				}
				return *ev.Bid, nil
			}, nexmark.Bid.Compare)
		}},
	"q2": {Name: "q2", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: select, kind: filter, function: %s}\n", fn("nx-q2"))
		},
		Check: func(evs []nexmark.Event, out []abi.Record) error {
			return compare(nexmark.Q2(evs), out, func(r abi.Record) (res nexmark.Q2Result, err error) {
				return res, json.Unmarshal(r.Value, &res)
			}, nexmark.Q2Result.Compare)
		}},
	"q3": {Name: "q3", Sources: []string{TopicAuctions}, Tables: "  - {name: persons, topic: persons, global: true}\n",
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - {name: category, kind: filter, function: %s}
  - {name: by-seller, kind: key_by, field: seller}
  - {name: local, kind: join, table: persons, function: %s}
`, fn("nx-q3"), fn("nx-q3"))
		},
		Check: func(evs []nexmark.Event, out []abi.Record) error {
			return compare(nexmark.Q3(evs), out, func(r abi.Record) (res nexmark.Q3Result, err error) {
				return res, json.Unmarshal(r.Value, &res)
			}, nexmark.Q3Result.Compare)
		},
		Note: "persons are a global table, sent before the auctions of the same chunk of events"},
	"q5": {Name: "q5", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return q5Counts(fn) + fmt.Sprintf(`  - {name: tag, kind: map, function: %[1]s}
  - {name: by-window, kind: key_by, field: end}
  - name: hot
    kind: aggregate
    function: %[1]s
    window: {type: tumbling, size: 2s}
  - {name: split, kind: flat_map, function: %[1]s}
`, fn("nx-q5"))
		},
		Check: checkQ5,
		Note:  "two aggregates: bids per auction and hopping window, then, keyed by window end, the auctions with the most bids of each window (a 2 s tumbling window holds the counts of the hopping windows ending at its end)"},
	"q5-counts": {Name: "q5-counts", Sources: []string{TopicBids},
		Steps: q5Counts,
		Check: checkQ5Counts,
		Note:  "q5's first half, as the Kafka Streams side-by-side runs it: the bids per auction and hopping window; the hot items are picked from them by the check"},
	"q7": {Name: "q7", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - {name: all, kind: key_by, function: %s}
  - name: highest
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 10s}
`, fn("nx-one"), fn("nx-q7"))
		},
		Check: checkQ7},
	"q8": {Name: "q8", Sources: []string{TopicPersons, TopicAuctions},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - {name: by-person, kind: key_by, function: %s}
  - name: new-sellers
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 10s}
`, fn("nx-q8"), fn("nx-q8"))
		},
		Check: checkQ8,
		Note:  "the windowed person–auction join is an aggregate over both streams keyed by person (id, or the auction's seller): one result per person and window holding the person and an auction of theirs"},
	"q11": {Name: "q11", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - {name: by-bidder, kind: key_by, field: bidder}
  - name: sessions
    kind: aggregate
    function: %s
    window: {type: session, gap: 10s}
`, fn("nx-count"))
		},
		Check: func(evs []nexmark.Event, out []abi.Record) error { return checkCounts(nexmark.Q11(evs), out) }},
	"q12": {Name: "q12", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - {name: by-bidder, kind: key_by, field: bidder}
  - name: counts
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 10s}
`, fn("nx-count"))
		},
		Check: func(evs []nexmark.Event, out []abi.Record) error { return checkCounts(nexmark.Q12(evs), out) }},
}

// Names returns the implemented queries in order.
func Names() []string {
	var ns []string
	for n := range Queries {
		ns = append(ns, n)
	}
	// By query number ("q5-counts" after "q5", before "q6"), then name.
	num := func(n string) int {
		d := strings.IndexFunc(n[1:], func(r rune) bool { return r < '0' || r > '9' })
		if d < 0 {
			d = len(n) - 1
		}
		x, _ := strconv.Atoi(n[1 : 1+d])
		return x
	}
	slices.SortFunc(ns, func(a, b string) int { return cmp.Or(cmp.Compare(num(a), num(b)), cmp.Compare(a, b)) })
	return ns
}

func sameCount(want, got int) error {
	if want != got {
		return fmt.Errorf("%d records, want %d", got, want)
	}
	return nil
}

// compare decodes the output, sorts it and compares it with want.
func compare[T any](want []T, out []abi.Record, decode func(abi.Record) (T, error), cmpf func(T, T) int) error {
	got := make([]T, 0, len(out))
	for _, r := range out {
		v, err := decode(r)
		if err != nil {
			return fmt.Errorf("output %s: %w", r.Value, err)
		}
		got = append(got, v)
	}
	slices.SortFunc(got, cmpf)
	slices.SortFunc(want, cmpf)
	for i := 0; i < min(len(got), len(want)); i++ {
		if cmpf(got[i], want[i]) != 0 {
			return fmt.Errorf("result %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	return sameCount(len(want), len(got))
}

// window returns a window result's [start, end).
func window(r abi.Record) (start, end int64, err error) {
	for _, h := range r.Headers {
		switch h.Key {
		case "eddy.window.start":
			start, err = strconv.ParseInt(string(h.Value), 10, 64)
		case "eddy.window.end":
			end, err = strconv.ParseInt(string(h.Value), 10, 64)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	if end == 0 {
		return 0, 0, fmt.Errorf("no window headers on %s", r.Value)
	}
	return start, end, nil
}

func checkCounts(want []nexmark.BidderCount, out []abi.Record) error {
	return compare(want, out, func(r abi.Record) (nexmark.BidderCount, error) {
		var c struct{ Count int64 }
		start, end, err := window(r)
		if err == nil {
			err = json.Unmarshal(r.Value, &c)
		}
		bidder, _ := strconv.ParseInt(string(r.Key), 10, 64)
		return nexmark.BidderCount{Bidder: bidder, Start: start, End: end, Count: c.Count}, err
	}, nexmark.BidderCount.Compare)
}

// q5Counts are the steps of q5's first half (q5-counts): the bids per
// auction and hopping window.
func q5Counts(fn func(string) string) string {
	return fmt.Sprintf(`  - {name: by-auction, kind: key_by, field: auction}
  - name: counts
    kind: aggregate
    function: %s
    window: {type: hopping, size: 10s, advance: 2s}
`, fn("nx-count"))
}

// hotItems picks, from q5-counts' counts per auction and window, the
// auctions with the most bids of each window.
func hotItems(out []abi.Record) ([]abi.Record, error) {
	best := map[[2]int64][]nexmark.Q5Result{}
	for _, r := range out {
		start, end, err := window(r)
		if err != nil {
			return nil, err
		}
		var c struct{ Count int64 }
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return nil, err
		}
		a, _ := strconv.ParseInt(string(r.Key), 10, 64)
		w := [2]int64{start, end}
		res := nexmark.Q5Result{Start: start, End: end, Auction: a, Count: c.Count}
		switch cur := best[w]; {
		case len(cur) == 0 || c.Count > cur[0].Count:
			best[w] = []nexmark.Q5Result{res}
		case c.Count == cur[0].Count:
			best[w] = append(cur, res)
		}
	}
	var hot []abi.Record
	for _, rs := range best {
		for _, r := range rs {
			v, _ := json.Marshal(r)
			hot = append(hot, abi.Record{Value: v})
		}
	}
	return hot, nil
}

func checkQ5Counts(evs []nexmark.Event, out []abi.Record) error {
	hot, err := hotItems(out)
	if err != nil {
		return err
	}
	return checkQ5(evs, hot)
}

func checkQ5(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q5(evs), out, func(r abi.Record) (res nexmark.Q5Result, err error) {
		return res, json.Unmarshal(r.Value, &res)
	}, nexmark.Q5Result.Compare)
}

func checkQ8(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q8(evs), out, func(r abi.Record) (res nexmark.Q8Result, err error) {
		if res.Start, res.End, err = window(r); err != nil {
			return res, err
		}
		var v struct {
			Person int64
			Name   string
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return res, err
		}
		if string(r.Key) != strconv.FormatInt(v.Person, 10) {
			return res, fmt.Errorf("key %q is not the person %d", r.Key, v.Person)
		}
		res.Person, res.Name = v.Person, v.Name
		return res, nil
	}, nexmark.Q8Result.Compare)
}

func checkQ7(evs []nexmark.Event, out []abi.Record) error {
	var got []abi.Record
	for _, r := range out {
		start, end, err := window(r)
		if err != nil {
			return err
		}
		var v struct {
			Price int64
			Bids  []struct{ Auction, Bidder, DateTime int64 }
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("output %s: %w", r.Value, err)
		}
		for _, b := range v.Bids {
			res := nexmark.Q7Result{Start: start, End: end, Auction: b.Auction, Bidder: b.Bidder, Price: v.Price, DateTime: b.DateTime}
			val, _ := json.Marshal(res)
			got = append(got, abi.Record{Value: val})
		}
	}
	return compare(nexmark.Q7(evs), got, func(r abi.Record) (res nexmark.Q7Result, err error) {
		return res, json.Unmarshal(r.Value, &res)
	}, nexmark.Q7Result.Compare)
}
