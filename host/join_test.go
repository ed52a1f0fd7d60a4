package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
)

type nested struct {
	Left  json.RawMessage `json:"left"`
	Right json.RawMessage `json:"right"`
}

// TestStreamTableJoin enriches orders with users, a table: co-partitioned
// (each task holds its partition of the table) and global (every node holds
// all of it). A left join: orders of unknown or deleted users come out with
// a null right side.
func TestStreamTableJoin(t *testing.T) {
	for _, global := range []bool{false, true} {
		t.Run(fmt.Sprintf("global=%v", global), func(t *testing.T) {
			b := startBroker(t, "orders", "users", "out", "dlq", "late")
			brokers := []string{b.Addr()}
			p := loadPipeline(t, fmt.Sprintf(`name: enrich
source: {topics: [orders]}
tables:
  - {name: users, topic: users, global: %v}
steps:
  - {name: enrich, kind: join, table: users, type: left}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
`, global))
			var users []abi.Record
			for i := 0; i < 10; i++ {
				users = append(users, abi.Record{Key: []byte(fmt.Sprintf("u%d", i)), Value: []byte(fmt.Sprintf(`{"name":"user %d"}`, i))})
			}
			users = append(users, abi.Record{Key: []byte("u9")}) // deleted
			produceAll(t, brokers, "users", users)
			n := newStatefulNode(t, brokers, p, "one", t.TempDir())
			startAdmin(t, n.node)
			n.start(t)
			// A global table is loaded before the node joins the group; a
			// co-partitioned one arrives through it: wait until it is in.
			// Either way the table is queryable.
			{
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				for {
					res, err := n.node.Admin().State(ctx, admin.StateQuery{Pipeline: "enrich", Store: "users", Prefix: []byte("u")})
					if err == nil && len(res.Entries) == 9 {
						break
					}
					if ctx.Err() != nil {
						t.Fatalf("the table did not load: %v %+v", err, res)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			var orders []abi.Record
			for i := 0; i < 60; i++ {
				orders = append(orders, abi.Record{Key: []byte(fmt.Sprintf("u%d", i%12)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i))})
			}
			produceAll(t, brokers, "orders", orders)
			out := consumeAll(t, b, "out", 60, time.Second)
			n.stop(t)
			if len(out) != 60 {
				t.Fatalf("%d results, want 60", len(out))
			}
			for _, r := range out {
				var v nested
				if err := json.Unmarshal(r.Value, &v); err != nil {
					t.Fatalf("result %s: %v", r.Value, err)
				}
				var user int
				fmt.Sscanf(string(r.Key), "u%d", &user)
				want := fmt.Sprintf(`{"name":"user %d"}`, user)
				if user >= 9 {
					want = "null"
				}
				if string(v.Right) != want || len(v.Left) == 0 {
					t.Fatalf("order of %s: %s, want right side %s", r.Key, r.Value, want)
				}
			}
		})
	}
}

// TestStreamStreamJoin pairs orders and payments of the same order id whose
// times are within the join window (a payment up to 1 s before and 2 s
// after its order), as an outer join: unmatched orders and payments come
// out alone once their window has closed. The output must equal a
// brute-force join of the input, each result once: under exactly_once, and
// under at_least_once, where the handover between the two nodes is a
// checkpoint.
func TestStreamStreamJoin(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) { testStreamStreamJoin(t, d) })
	}
}

func testStreamStreamJoin(t *testing.T, delivery host.Delivery) {
	b := startBroker(t, "orders", "payments", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	p := loadPipeline(t, `name: pay
source: {topics: [orders]}
steps:
  - name: match
    kind: join
    stream: payments
    type: outer
    window: {before: 1s, after: 2s, grace: 500ms, disorder: 200ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: `+string(delivery)+`
commit_interval: 50ms
batch_size: 50
`)
	const base = int64(1700000000000)
	rng := rand.New(rand.NewPCG(7, 8))
	type ev struct {
		key string
		t   int64
		v   string
	}
	var orders, payments []ev
	for i := 0; i < 400; i++ {
		o := ev{fmt.Sprintf("o%d", i%150), base + int64(i)*50, fmt.Sprintf(`{"order":%d}`, i)}
		orders = append(orders, o)
		if i%3 != 0 {
			payments = append(payments, ev{o.key, o.t - 1500 + rng.Int64N(4500), fmt.Sprintf(`{"pay":%d}`, i)})
		}
	}
	sort.Slice(payments, func(i, j int) bool { return payments[i].t < payments[j].t })
	// The reference: every pair within the window, then the unmatched.
	want := map[string]int{}
	matchedP := map[int]bool{}
	for _, o := range orders {
		found := false
		for j, pm := range payments {
			if pm.key == o.key && pm.t >= o.t-1000 && pm.t <= o.t+2000 {
				want[o.key+" "+o.v+" "+pm.v]++
				found, matchedP[j] = true, true
			}
		}
		if !found {
			want[o.key+" "+o.v+" null"]++
		}
	}
	for j, pm := range payments {
		if !matchedP[j] {
			want[pm.key+" null "+pm.v]++
		}
	}
	total := 0
	for _, c := range want {
		total += c
	}
	toRecs := func(evs []ev) []abi.Record {
		var rs []abi.Record
		for _, e := range evs {
			rs = append(rs, abi.Record{Key: []byte(e.key), Value: []byte(e.v), Timestamp: e.t})
		}
		for j := 0; j < 40; j++ { // far ahead on every partition: closes every window above
			rs = append(rs, abi.Record{Key: []byte(fmt.Sprintf("close%d", j)), Value: []byte("0"), Timestamp: base + 3_600_000})
		}
		return rs
	}
	// The first node sees every order but only the first half of the
	// payments; the second (restored from the changelog alone) sees the
	// rest of the payments and no more orders: the orders input must not
	// hold its windows back after the restart.
	n1 := startStatefulNode(t, brokers, p, "one", t.TempDir())
	produceAll(t, brokers, "orders", toRecs(orders))
	half := len(payments) / 2
	produceAll(t, brokers, "payments", toRecs(payments[:half])[:half])
	await.Until(t, 20*time.Millisecond, func() bool { return n1.node.Stats().In >= int64(len(orders)+40+half) },
		func() string { return fmt.Sprintf("the first node processed %d records", n1.node.Stats().In) })
	time.Sleep(200 * time.Millisecond) // a commit
	n1.stop(t)
	n2 := startStatefulNode(t, brokers, p, "two", t.TempDir())
	produceAll(t, brokers, "payments", toRecs(payments[half:]))
	out := consumeAll(t, b, "out", total, 2*time.Second)
	n2.stop(t)
	got := map[string]int{}
	for _, r := range out {
		if string(r.Key[:min(5, len(r.Key))]) == "close" {
			continue
		}
		var v nested
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("result %s: %v", r.Value, err)
		}
		got[string(r.Key)+" "+string(v.Left)+" "+string(v.Right)]++
	}
	var diffs []string
	for k, c := range want {
		if got[k] != c {
			diffs = append(diffs, fmt.Sprintf("%s: got %d want %d", k, got[k], c))
		}
	}
	for k, c := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: got %d, not in the reference", k, c))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%d of %d results differ, e.g. %v", len(diffs), len(want), diffs[:min(6, len(diffs))])
	}
	if late := consumeAll(t, b, "late", 0, 300*time.Millisecond); len(late) != 0 {
		t.Fatalf("%d late records, want none", len(late))
	}
}
