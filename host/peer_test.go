package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
)

// serveAdmin serves a node's admin API on addr with a token until stop
// (or the test's end).
func serveAdmin(t *testing.T, n *host.Node, addr, token string) (url string, stop func()) {
	t.Helper()
	srv, err := admin.NewServer(n.Admin(), admin.Config{Addr: addr, Token: token})
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
	stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	t.Cleanup(stop)
	n.AdvertiseAdmin(srv.URL(), token)
	return srv.URL(), stop
}

// TestStrangerInTheGroupGetsNoToken joins a pipeline's consumer group with a
// plain Kafka client that advertises, as a node would, an admin URL: a
// listener of the test's. Unauthenticated loopback reads of one node's
// cluster status and a state scan make the node ask every member; the
// listener must never see the token, nor anything it can replay to a node
// or deploy with, and its forged status must not be shown. The two genuine
// nodes, one of them on a non-loopback address where reads need
// authentication, still gather each other's status and state.
func TestStrangerInTheGroupGetsNoToken(t *testing.T) {
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
	const token = "tok-4f3c9a"
	one := newStatefulNode(t, brokers, p, "one", t.TempDir())
	oneURL, _ := serveAdmin(t, one.node, "127.0.0.1:0", token)
	one.start(t)
	two := newStatefulNode(t, brokers, p, "two", t.TempDir())
	twoURL, _ := serveAdmin(t, two.node, "0.0.0.0:0", token) // reads need authentication there
	two.start(t)
	await.Until(t, 20*time.Millisecond, func() bool {
		return len(one.node.Status().Partitions["in"]) > 0 && len(two.node.Status().Partitions["in"]) > 0
	}, func() string { return "the two nodes did not share the partitions" })

	// The stranger's listener records what it is sent and answers with a
	// forged status.
	type seen struct {
		method, uri string
		header      http.Header
	}
	var mu sync.Mutex
	var got []seen
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.RequestURI(), r.Header.Clone()})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(host.NodeStatus{Node: "forged", Pipeline: "counts"})
	}))
	defer listener.Close()
	stranger, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("counts"), kgo.ConsumeTopics("in"),
		kgo.Balancers(host.NodeBalancer([]byte(listener.URL))))
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	strangerDone := make(chan struct{})
	go func() {
		defer close(strangerDone)
		for sctx.Err() == nil {
			stranger.PollFetches(sctx)
		}
	}()
	defer func() {
		stop()
		<-strangerDone
		stranger.Close()
	}()

	anon := &admin.Client{BaseURL: oneURL} // loopback: no token needed to read
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cs host.ClusterStatus
	contacted := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	}
	nodeIDs := func() []string {
		var ids []string
		for _, n := range cs.Nodes {
			ids = append(ids, n.Node)
		}
		return ids
	}
	await.Until(t, 50*time.Millisecond, func() bool {
		raw, err := anon.Cluster(ctx)
		if err != nil {
			return false
		}
		cs = host.ClusterStatus{}
		json.Unmarshal(raw.(json.RawMessage), &cs)
		ids := nodeIDs()
		return contacted() && slices.Contains(ids, "one") && slices.Contains(ids, "two")
	}, func() string {
		return fmt.Sprintf("the cluster status never listed both nodes with the stranger asked: %+v", cs)
	})
	noToken := func() {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for _, s := range got {
			for k, vs := range s.header {
				for _, v := range vs {
					if strings.Contains(v, token) || strings.EqualFold(k, "Authorization") {
						t.Fatalf("the stranger got %s: %s on %s %s", k, v, s.method, s.uri)
					}
				}
			}
		}
	}
	noToken()
	if ids := nodeIDs(); !slices.Equal(ids, []string{"one", "two"}) {
		t.Fatalf("cluster nodes %v, want [one two] (the stranger's forged status must not count)", ids)
	}
	if !slices.ContainsFunc(cs.Unreachable, func(p host.PeerError) bool { return p.Admin == listener.URL }) {
		t.Fatalf("the stranger is not listed as unreachable: %+v", cs.Unreachable)
	}

	// State in both nodes' partitions, read by a scan through node one.
	var recs []abi.Record
	for i := 0; i < 400; i++ {
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%20)), Value: []byte("x")})
	}
	produceAll(t, brokers, "in", recs)
	var res admin.StateResult
	await.Until(t, 100*time.Millisecond, func() bool {
		res, err = anon.State(ctx, admin.StateQuery{Pipeline: "counts", Store: "count", Prefix: []byte("k")})
		if err != nil {
			return false
		}
		var inOne, inTwo bool
		for _, e := range res.Entries {
			inOne = inOne || slices.Contains(one.node.Status().Partitions["in"], e.Partition)
			inTwo = inTwo || slices.Contains(two.node.Status().Partitions["in"], e.Partition)
		}
		return inOne && inTwo
	}, func() string { return fmt.Sprintf("the scan did not gather both nodes' state: %+v, %v", res, err) })
	noToken()
	if !res.Partial || !slices.Contains(res.Missing, listener.URL) {
		t.Fatalf("the scan does not say the stranger is missing: partial %v, missing %v", res.Partial, res.Missing)
	}
	mu.Lock()
	defer mu.Unlock()
	scanned := false
	for _, s := range got {
		scanned = scanned || strings.HasPrefix(s.uri, "/v1/state/")
		// What it got does not open a node: replayed, or on a deploy.
		for _, target := range []string{twoURL, oneURL} {
			for _, m := range []string{s.method, http.MethodPost} {
				path := s.uri
				if m == http.MethodPost {
					path = "/v1/functions/counts/count/rollback"
				}
				req, _ := http.NewRequest(m, target+path, nil)
				req.Header.Set(admin.PeerHeader, s.header.Get(admin.PeerHeader))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("%s %s%s with the stranger's %s header: %d, want 401", m, target, path, admin.PeerHeader, resp.StatusCode)
				}
			}
		}
	}
	if !scanned {
		t.Fatal("the scan did not ask the stranger: the test does not test it")
	}
}
