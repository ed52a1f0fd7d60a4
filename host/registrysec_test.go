package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/registry"
)

// writeRegistry writes a module's chunks and an event straight to the
// registry topic, as any Kafka producer can.
func writeRegistry(t *testing.T, brokers []string, module []byte, ev registry.Event) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []registry.Record
	if module != nil {
		recs = registry.ModuleRecords(module, 0)
	}
	er, err := registry.EventRecord(&ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(recs, er) {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: registry.DefaultTopic, Key: r.Key, Value: r.Value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func liveVersion(n *host.Node) int { return n.Status().Steps[0].Version }

// TestRegistryWritesAreVerified: deploys through a node are signed and
// taken by both nodes of the pipeline; deploy events written straight to
// the registry topic, unsigned or signed with another key, are refused
// (each node keeps its version, logs and counts them); a signed event
// naming a module that is not Wasm is kept off by a running node, and a
// node that restarts with it live falls back to the version before it
// instead of refusing to start; a rollback written to the registry
// without any node fixes it.
func TestRegistryWritesAreVerified(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	p := pipeline(t, "signed", "go/upper.wasm", host.AtLeastOnce, "")
	one := startStatefulNode(t, brokers, p, "one", "")
	two := startStatefulNode(t, brokers, p, "two", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A deploy through the admin API: signed, taken by both nodes.
	ev, err := one.node.Admin().Deploy(ctx, admin.DeployRequest{Pipeline: "signed", Step: "fn", Module: readModule(t, "c/upper.wasm")})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Sig == "" {
		t.Fatal("the deploy event is not signed")
	}
	for _, n := range []*runningNode{one, two} {
		await.Until(t, 10*time.Millisecond, func() bool { return liveVersion(n.node) == ev.Version },
			func() string { return fmt.Sprintf("a node runs version %d, want %d", liveVersion(n.node), ev.Version) })
	}

	// A note over the limit is refused, not a 500.
	_, err = one.node.Admin().Rollback(ctx, "signed", "fn", 0, strings.Repeat("n", registry.MaxNoteSize+1))
	if ae := admin.AsError(err); ae == nil || ae.Status != 400 {
		t.Fatalf("a rollback with a note of %d bytes: %v, want 400", registry.MaxNoteSize+1, err)
	}

	// Forged deploys written to the topic: refused by both, counted.
	forged := readModule(t, "go/filter.wasm")
	unsigned := registry.Event{Pipeline: "signed", Step: "fn", Version: ev.Version + 1, Action: registry.ActionDeploy,
		Digest: registry.Digest(forged), Time: time.Now().UTC(), Node: "mallory"}
	writeRegistry(t, brokers, forged, unsigned)
	misSigned := unsigned
	registry.Sign(&misSigned, registry.Key("not the token"))
	writeRegistry(t, brokers, forged, misSigned)
	for _, n := range []*runningNode{one, two} {
		await.Until(t, 10*time.Millisecond, func() bool { return n.node.Stats().RegistryRefused >= 2 },
			func() string {
				return fmt.Sprintf("%d registry records refused, want 2", n.node.Stats().RegistryRefused)
			})
		if v := liveVersion(n.node); v != ev.Version {
			t.Fatalf("a node runs version %d after forged deploys, want %d", v, ev.Version)
		}
	}
	// A forged reset would stop the pipeline's nodes: refused too.
	writeRegistry(t, brokers, nil, registry.Event{Pipeline: "signed", Version: 1, Action: registry.ActionReset,
		To: "earliest", Time: time.Now().UTC(), Node: "mallory"})
	await.Until(t, 10*time.Millisecond, func() bool { return one.node.Stats().RegistryRefused >= 3 },
		func() string {
			return fmt.Sprintf("%d registry records refused, want 3", one.node.Stats().RegistryRefused)
		})
	if err := one.node.Admin().Health(ctx); err != nil {
		t.Fatalf("after a forged reset: %v", err)
	}
	var hist registry.StepState
	hist, err = one.node.Admin().History(ctx, "signed", "fn")
	if err != nil || hist.Live == nil || hist.Live.Version != ev.Version {
		t.Fatalf("the history took a forged event: %+v, %v", hist.Live, err)
	}

	// A signed event naming a module that does not load.
	notWasm := []byte("not a wasm module")
	bad := registry.Event{Pipeline: "signed", Step: "fn", Version: ev.Version + 1, Action: registry.ActionDeploy,
		Digest: registry.Digest(notWasm), Time: time.Now().UTC(), Node: "broken"}
	registry.Sign(&bad, testRegistryKey)
	writeRegistry(t, brokers, notWasm, bad)
	await.Until(t, 10*time.Millisecond, func() bool { return one.node.Stats().BadVersions >= 1 },
		func() string { return "the running node did not count the version that does not load" })
	if v := liveVersion(one.node); v != ev.Version {
		t.Fatalf("the running node runs version %d, want %d", v, ev.Version)
	}
	// Restarted, a node starts on the version before it.
	two.stop(t)
	three := startStatefulNode(t, brokers, p, "three", "")
	await.Until(t, 10*time.Millisecond, func() bool { return three.node.Admin().Health(ctx) == nil },
		func() string { return "the restarted node did not start" })
	if v, bv := liveVersion(three.node), three.node.Stats().BadVersions; v != ev.Version || bv != 1 {
		t.Fatalf("the restarted node runs version %d with %d bad versions, want %d and 1", v, bv, ev.Version)
	}

	// A rollback written without a node: both running nodes take it.
	one.stop(t)
	three.stop(t)
	rb, err := host.RegistryRollback(ctx, host.RegistryOptions{Brokers: brokers, Key: testRegistryKey, Node: "cli"}, "signed", "fn", 0, "the deploy does not load")
	if err != nil {
		t.Fatal(err)
	}
	if rb.Target != ev.Version || rb.Sig == "" {
		t.Fatalf("rollback %+v, want a signed one to version %d", rb, ev.Version)
	}
	four := startStatefulNode(t, brokers, p, "four", "")
	await.Until(t, 10*time.Millisecond, func() bool { return liveVersion(four.node) == rb.Version },
		func() string {
			return fmt.Sprintf("the node runs version %d, want the rollback %d", liveVersion(four.node), rb.Version)
		})
	if bv := four.node.Stats().BadVersions; bv != 0 {
		t.Fatalf("%d bad versions after the rollback", bv)
	}
}
