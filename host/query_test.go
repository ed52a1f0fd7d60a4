package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
)

// startAdmin serves a node's admin API on a free loopback port.
func startAdmin(t *testing.T, n *host.Node) string {
	t.Helper()
	url, _ := serveAdmin(t, n, "127.0.0.1:0", "tok")
	return url
}

// TestStaleQueriesFromStandbys counts records per key with keyed state and
// standby_replicas: 1 on three nodes. A stale query of a key is answered
// by the asked node's standby copy when it keeps one (the count the
// output shows, once the copy has caught up), and forwarded to the owner
// by a node without one. When the owner does not answer (its admin API is
// stopped: a node gone, not yet out of the group), a stale query goes to
// the node with the copy, and a query that is not stale fails.
func TestStaleQueriesFromStandbys(t *testing.T) {
	b, p, _, _ := standingCounter(t, "stale", 0)
	brokers := b.Brokers()
	ids := []string{"one", "two", "three"}
	nodes := map[string]*runningNode{}
	urls, stops := map[string]string{}, map[string]func(){}
	for _, id := range ids {
		n := newStatefulNode(t, brokers, p, id, t.TempDir())
		urls[id], stops[id] = serveAdmin(t, n.node, "127.0.0.1:0", "tok")
		n.start(t)
		nodes[id] = n
	}
	// owners and holders of each partition, from the nodes' statuses.
	roles := func() (owner, holder map[int32]string) {
		owner, holder = map[int32]string{}, map[int32]string{}
		for _, id := range ids {
			st := nodes[id].node.Status()
			for _, part := range st.Partitions["in"] {
				owner[part] = id
			}
			for _, s := range st.Standbys {
				if s.Position >= 0 && !s.Warmup {
					holder[s.Partition] = id
				}
			}
		}
		return owner, holder
	}
	var owner, holder map[int32]string
	await.Until(t, 20*time.Millisecond, func() bool {
		owner, holder = roles()
		if len(owner) != 4 || len(holder) != 4 {
			return false
		}
		for part, id := range owner {
			if holder[part] == id {
				return false
			}
		}
		return len(nodes["one"].node.Status().Partitions["in"]) > 0 && len(nodes["two"].node.Status().Partitions["in"]) > 0 &&
			len(nodes["three"].node.Status().Partitions["in"]) > 0
	}, func() string { return fmt.Sprintf("owners %v, standby copies %v", owner, holder) })
	t.Logf("owners %v, standby copies %v", owner, holder)

	var recs []abi.Record
	for i := range 600 {
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%12)), Value: []byte("x")})
	}
	produceAll(t, brokers, "in", recs)
	last := map[string]int{}
	for _, r := range consumeAll(t, b, "out", 600, time.Second) {
		c, _ := strconv.Atoi(string(r.Value))
		last[string(r.Key)] = max(last[string(r.Key)], c)
	}
	ctx := context.Background()
	client := func(id string) *admin.Client { return &admin.Client{BaseURL: urls[id], Token: "tok"} }
	ask := func(id, key string, stale bool) (admin.StateResult, error) {
		return client(id).State(ctx, admin.StateQuery{Pipeline: "stale", Store: "count", Key: []byte(key), Stale: stale})
	}
	partOf := map[string]int32{}
	for k := range last {
		res, err := ask("one", k, false)
		if err != nil || len(res.Entries) != 1 {
			t.Fatalf("key %s: %+v, %v", k, res, err)
		}
		partOf[k] = res.Entries[0].Partition
	}
	// The copy answers at its node; a third node forwards to the owner.
	for _, k := range slices.Sorted(maps.Keys(last)) {
		part := partOf[k]
		h := holder[part]
		var res admin.StateResult
		await.Until(t, 20*time.Millisecond, func() bool {
			var err error
			res, err = ask(h, k, true)
			return err == nil && len(res.Entries) == 1 && string(res.Entries[0].Value) == strconv.Itoa(last[k])
		}, func() string {
			return fmt.Sprintf("key %s from %s's copy of partition %d: %+v, want %d", k, h, part, res, last[k])
		})
		if !res.Standby || res.Node != urls[h] || res.Owner != "" || res.Lag < 0 {
			t.Errorf("key %s from %s's copy: %+v, want its standby's answer", k, h, res)
		}
		for _, id := range ids {
			if id == h || id == owner[part] {
				continue
			}
			res, err := ask(id, k, true)
			if err != nil || res.Standby || res.Owner != urls[owner[part]] || len(res.Entries) != 1 || string(res.Entries[0].Value) != strconv.Itoa(last[k]) {
				t.Errorf("key %s asked of %s (no copy): %+v, %v; want the owner %s's answer", k, id, res, err, owner[part])
			}
		}
	}
	// The owner of a partition stops answering: a third node's stale
	// query goes to the copy.
	var k, gone, third string
	for _, key := range slices.Sorted(maps.Keys(last)) {
		part := partOf[key]
		for _, id := range ids {
			if id != owner[part] && id != holder[part] {
				k, gone, third = key, owner[part], id
			}
		}
		if k != "" {
			break
		}
	}
	stops[gone]()
	res, err := ask(third, k, true)
	if err != nil || !res.Standby || res.Node != urls[holder[partOf[k]]] || res.Owner != urls[gone] ||
		len(res.Entries) != 1 || string(res.Entries[0].Value) != strconv.Itoa(last[k]) {
		t.Errorf("key %s asked of %s with its owner %s not answering: %+v, %v; want %s's copy to answer %d", k, third, gone, res, err, holder[partOf[k]], last[k])
	}
	if res, err := ask(third, k, false); err == nil {
		t.Errorf("key %s asked of %s, not stale, with its owner %s not answering: %+v, want an error", k, third, gone, res)
	}
	for _, n := range nodes {
		n.stop(t)
	}
}

// TestQueryableStateFromEitherNode counts records per key with keyed state
// on two nodes; every key's count, asked from either node (which forwards to
// the owner when it is not), equals the last count in the output topic, and
// a scan from either node sees every key.
func TestQueryableStateFromEitherNode(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: counts
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, counter))
	var nodes []*runningNode
	var urls []string
	for _, id := range []string{"one", "two"} {
		n := newStatefulNode(t, brokers, p, id, t.TempDir())
		urls = append(urls, startAdmin(t, n.node))
		n.start(t)
		nodes = append(nodes, n)
	}
	// Both nodes hold partitions before the records arrive.
	await.Until(t, 20*time.Millisecond, func() bool {
		return len(nodes[0].node.Status().Partitions["in"]) > 0 && len(nodes[1].node.Status().Partitions["in"]) > 0
	}, func() string { return "the two nodes did not share the partitions" })
	var recs []abi.Record
	for i := 0; i < 500; i++ {
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte("x")})
	}
	produceAll(t, brokers, "in", recs)
	out := consumeAll(t, b, "out", 500, time.Second)
	last := map[string]int{}
	for _, r := range out {
		c, _ := strconv.Atoi(string(r.Value))
		last[string(r.Key)] = max(last[string(r.Key)], c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, url := range urls {
		cl := &admin.Client{BaseURL: url, Token: "tok"}
		forwarded := 0
		for k, want := range last {
			res, err := cl.State(ctx, admin.StateQuery{Pipeline: "counts", Store: "count", Key: []byte(k)})
			if err != nil {
				t.Fatalf("%s: key %s: %v", url, k, err)
			}
			if len(res.Entries) != 1 || string(res.Entries[0].Value) != strconv.Itoa(want) {
				t.Fatalf("%s: key %s: %+v, want %d", url, k, res.Entries, want)
			}
			if res.Owner != "" {
				forwarded++
			}
		}
		if forwarded == 0 || forwarded == len(last) {
			t.Fatalf("%s: %d of %d keys forwarded: each node should own some keys", url, forwarded, len(last))
		}
		res, err := cl.State(ctx, admin.StateQuery{Pipeline: "counts", Store: "count", Prefix: []byte("k")})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) != len(last) || res.Partial {
			t.Fatalf("%s: scan found %d entries (partial %v), want %d", url, len(res.Entries), res.Partial, len(last))
		}
	}
	_, err := (&admin.Client{BaseURL: urls[0]}).State(ctx, admin.StateQuery{Pipeline: "counts", Store: "nope", Key: []byte("k1")})
	if ae := admin.AsError(err); ae == nil || ae.Status != 404 {
		t.Fatalf("unknown store: %v", err)
	}
	for _, n := range nodes {
		n.stop(t)
	}
}

// TestQueryableWindows asks a node for the windows of a hopping aggregate
// (6 s every 4 s: each window the merge of three 2 s panes) while it keeps
// them for an hour of retention: the answer must hold every window of every
// key with the count and sum computed directly from the input, and equal
// the last update the node wrote for it.
func TestQueryableWindows(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	stats, _ := filepath.Abs("../testdata/c/stats.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: hop
source: {topics: [in]}
steps:
  - name: stats
    kind: aggregate
    function: %s
    window: {type: hopping, size: 6s, advance: 4s, retention: 1h}
    emit: update
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
`, stats))
	n := startStatefulNode(t, brokers, p, "one", t.TempDir())
	const base = int64(1700000000000) // a multiple of 4 s
	type wk struct {
		key   string
		start int64
	}
	want := map[wk][2]int{}
	var recs []abi.Record
	for i := 0; i < 300; i++ {
		key, ts, v := fmt.Sprintf("k%d", i%5), base+int64(i)*97, i%13
		recs = append(recs, abi.Record{Key: []byte(key), Value: []byte(strconv.Itoa(v)), Timestamp: ts})
		for s := (ts - base) / 4000 * 4000; s > ts-base-6000; s -= 4000 {
			c := want[wk{key, base + s}]
			want[wk{key, base + s}] = [2]int{c[0] + 1, c[1] + v}
		}
	}
	produceAll(t, brokers, "in", recs)
	ctx := context.Background()
	query := func() (map[wk][2]int, map[wk]string, error) {
		res, err := n.node.Admin().State(ctx, admin.StateQuery{Pipeline: "hop", Store: "stats", Prefix: []byte("k")})
		if err != nil {
			return nil, nil, err
		}
		got, raw := map[wk][2]int{}, map[wk]string{}
		for _, e := range res.Entries {
			if e.Window == nil || e.Window[1]-e.Window[0] != 6000 {
				return nil, nil, fmt.Errorf("entry %s: window %v, want a 6 s window", e.Key, e.Window)
			}
			var r struct{ Count, Sum int }
			if err := json.Unmarshal(e.Value, &r); err != nil {
				return nil, nil, fmt.Errorf("entry %s %v: %q: %w", e.Key, *e.Window, e.Value, err)
			}
			w := wk{string(e.Key), e.Window[0]}
			got[w], raw[w] = [2]int{r.Count, r.Sum}, string(e.Value)
		}
		return got, raw, nil
	}
	var got map[wk][2]int
	var raw map[wk]string
	var qerr error
	await.Until(t, 50*time.Millisecond, func() bool {
		got, raw, qerr = query()
		return qerr == nil && maps.Equal(got, want)
	}, func() string {
		return fmt.Sprintf("the query gave %d windows (error %v), want %d equal to the input's", len(got), qerr, len(want))
	})
	// The last update of each window in the output says the same, once
	// the output is read to its end (a consumer's first fetch from Apache
	// Kafka can take longer than an idle second on a busy machine).
	var last map[wk]string
	await.Until(t, 100*time.Millisecond, func() bool {
		last = map[wk]string{}
		for _, r := range consumeAll(t, b, "out", len(raw), time.Second) {
			for _, h := range r.Headers {
				if h.Key == "eddy.window.start" {
					s, _ := strconv.ParseInt(string(h.Value), 10, 64)
					last[wk{string(r.Key), s}] = string(r.Value)
				}
			}
		}
		return maps.Equal(last, raw)
	}, func() string {
		return fmt.Sprintf("the output's last updates (%d windows) differ from the query (%d windows)", len(last), len(raw))
	})
	n.stop(t)
}
