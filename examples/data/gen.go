//go:build ignore

// Gen writes the input files of the examples (JSON lines, as eddy produce
// reads them). Run from the repository root:
//
//	go run examples/data/gen.go
//
// The files are committed; this program says how they were made.
package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/eddy-streams/eddy/nexmark"
)

// line is one record in eddy produce's format.
type line struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp int64           `json:"timestamp"`
}

const base = int64(1767225600000) // 2026-01-01T00:00:00Z

// check ends the program on an error, naming it.
func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func write(name string, lines []line) {
	f, err := os.Create(filepath.Join("examples", "data", name))
	check(err)
	enc := json.NewEncoder(f)
	for _, l := range lines {
		check(enc.Encode(l))
	}
	check(f.Close())
}

func main() {
	// Nexmark events, all three kinds (fan-out).
	cfg := nexmark.DefaultConfig()
	cfg.Events, cfg.BaseTime = 300, base
	g, err := nexmark.NewGenerator(cfg)
	check(err)
	var events []line
	for ev, ok := g.Next(); ok; ev, ok = g.Next() {
		r := nexmark.Record(ev)
		events = append(events, line{string(r.Key), r.Value, r.Timestamp})
	}
	write("events.jsonl", events)

	// Bids over 150 seconds, 20 a second, keyed by bidder; a few auctions
	// are hot (alerts, top-auctions).
	rng := rand.New(rand.NewPCG(17, 2026))
	var bids []line
	for i := range 3000 {
		auction := 1000 + rng.IntN(30)
		if rng.IntN(3) == 0 {
			auction = 1000 + rng.IntN(4)
		}
		bidder := 2000 + rng.IntN(50)
		v := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d}`, auction, bidder, 100+rng.IntN(9900))
		bids = append(bids, line{fmt.Sprint(bidder), json.RawMessage(v), base + int64(i)*50})
	}
	write("bids.jsonl", bids)

	// Customers (a table) and orders from two channels keyed by customer
	// (enrich); customers c21..c24 order but are not in the table.
	tiers := []string{"gold", "silver", "bronze"}
	var customers []line
	for c := 1; c <= 20; c++ {
		v := fmt.Sprintf(`{"name":"customer %d","tier":%q}`, c, tiers[c%3])
		customers = append(customers, line{fmt.Sprintf("c%d", c), json.RawMessage(v), base - 60_000})
	}
	write("customers.jsonl", customers)
	for _, channel := range []string{"web", "app"} {
		var orders []line
		for i := range 150 {
			c := 1 + rng.IntN(24)
			v := fmt.Sprintf(`{"order":"%s-%d","amount":%d}`, channel, i, 5+rng.IntN(500))
			orders = append(orders, line{fmt.Sprintf("c%d", c), json.RawMessage(v), base + int64(i)*100})
		}
		write(channel+"-orders.jsonl", orders)
	}

	// Activity of 8 users over 150 seconds, an event every 50 ms from one
	// of them, keyed by user: a user picked less often goes quiet for more
	// than a second now and then (session-timeout).
	var activity []line
	for i := range 3000 {
		u := rng.IntN(8)
		if rng.IntN(2) == 0 {
			u = rng.IntN(3) // three busy users
		}
		v := fmt.Sprintf(`{"user":"u%d","action":%q}`, u, []string{"view", "click", "scroll"}[rng.IntN(3)])
		activity = append(activity, line{fmt.Sprintf("u%d", u), json.RawMessage(v), base + int64(i)*50})
	}
	write("activity.jsonl", activity)

	// Clicks over 5 minutes, one every 150 ms, keyed by click id: a third
	// are sent again within 3 seconds (duplicates), a few again after 70
	// seconds or more (new again) (dedupe).
	var clicks []line
	for i := range 2000 {
		id := fmt.Sprintf("click-%d", i)
		switch r := rng.IntN(100); {
		case r < 33 && i > 20:
			id = clicks[i-1-rng.IntN(20)].Key
		case r < 38 && i > 600:
			id = clicks[i-600+rng.IntN(100)].Key
		}
		v := fmt.Sprintf(`{"id":%q,"seq":%d}`, id, i)
		clicks = append(clicks, line{id, json.RawMessage(v), base + int64(i)*150})
	}
	write("clicks.jsonl", clicks)
}
