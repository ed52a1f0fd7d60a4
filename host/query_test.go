package host_test

import (
	"context"
	"fmt"
	"path/filepath"
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
	srv, err := admin.NewServer(n.Admin(), admin.Config{Addr: "127.0.0.1:0", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	n.AdvertiseAdmin(srv.URL(), "tok")
	return srv.URL()
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
