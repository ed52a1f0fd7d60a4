package host_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/registry"
)

func readModule(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHotSwapUnderLoad deploys a new version of a map step into two running
// exactly-once nodes while records keep arriving, then rolls it back. The
// read_committed output must hold every input record exactly once, each
// tagged with exactly one version, versions must only go up on each
// partition, and both nodes must keep running throughout.
func TestHotSwapUnderLoad(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "swap", "go/upper.wasm", host.ExactlyOnce, "")
	n1 := startNode(t, b, p, "one")
	n2 := startNode(t, b, p, "two")
	nodes := []*runningNode{n1, n2}
	await.Until(t, 20*time.Millisecond, func() bool {
		return len(n1.node.Status().Partitions["in"]) == 2 && len(n2.node.Status().Partitions["in"]) == 2
	}, func() string {
		return fmt.Sprintf("partitions: one %v, two %v", n1.node.Status().Partitions["in"], n2.node.Status().Partitions["in"])
	})

	// Continuous load, rounds of 1000 records 150 ms apart, until both
	// versions have served records for a while.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var rounds int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ; ; rounds++ {
			select {
			case <-stop:
				return
			default:
			}
			produceN(t, b, "in", rounds*1000, (rounds+1)*1000)
			time.Sleep(150 * time.Millisecond)
		}
	}()
	out := func() int64 { return n1.node.Stats().Out + n2.node.Stats().Out }
	// servedBy waits until both nodes run version v of the step and have
	// output records since.
	servedBy := func(v int) {
		t.Helper()
		from := map[*runningNode]int64{}
		await.Until(t, 20*time.Millisecond, func() bool {
			for _, n := range nodes {
				st := n.node.Status()
				if len(st.Steps) == 0 || st.Steps[0].Version != v {
					delete(from, n)
					continue
				}
				if _, ok := from[n]; !ok {
					from[n] = st.Stats.Out
				}
			}
			for _, n := range nodes {
				if f, ok := from[n]; !ok || n.node.Stats().Out < f+500 {
					return false
				}
			}
			return true
		}, func() string {
			return fmt.Sprintf("version %d has not served 500 records on each node (%d out in all)", v, out())
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cModule := readModule(t, "c/upper.wasm")
	await.Until(t, 20*time.Millisecond, func() bool { return n1.node.Stats().Out > 0 && n2.node.Stats().Out > 0 },
		func() string { return fmt.Sprintf("outputs: one %d, two %d", n1.node.Stats().Out, n2.node.Stats().Out) })
	v2, err := n1.node.Deploy(ctx, host.Deployment{Step: "fn", Module: cModule, Note: "C port"})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != 2 || v2.Action != registry.ActionDeploy || v2.Digest != registry.Digest(cModule) {
		t.Fatalf("deploy: %+v (version 1 is the pipeline file's module)", v2)
	}
	servedBy(2)
	v3, err := n2.node.Rollback(ctx, "fn", 0, "back to Go")
	if err != nil {
		t.Fatal(err)
	}
	if v3.Version != 3 || v3.Target != 1 || v3.Digest != registry.Digest(readModule(t, "go/upper.wasm")) {
		t.Fatalf("rollback: %+v", v3)
	}
	servedBy(3)
	close(stop)
	wg.Wait()
	total := rounds * 1000

	type rec struct {
		value   string
		version int
	}
	perPart := map[int32][]rec{}
	var mu sync.Mutex
	deadline := time.Now().Add(60 * time.Second)
	for {
		clear(perPart)
		n := 0
		_, err := host.Consume(ctx, []string{b.Addr()}, "out", host.ConsumeOptions{Idle: 2 * time.Second}, func(r abi.Record, m host.Meta) error {
			var tags []string
			for _, h := range r.Headers {
				if h.Key == host.FunctionHeader("fn") {
					tags = append(tags, string(h.Value))
				}
			}
			if len(tags) != 1 {
				return fmt.Errorf("record %s has %d version headers: %v", r.Value, len(tags), tags)
			}
			v, digest, _ := strings.Cut(tags[0], " sha256:")
			version, err := strconv.Atoi(strings.TrimPrefix(v, "v"))
			if err != nil {
				return fmt.Errorf("version header %q: %w", tags[0], err)
			}
			if version == 2 && digest != registry.Digest(cModule) {
				return fmt.Errorf("record %s: version 2 with digest %s", r.Value, digest)
			}
			mu.Lock()
			perPart[m.Partition] = append(perPart[m.Partition], rec{string(r.Value), version})
			n++
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n >= total || time.Now().After(deadline) {
			break
		}
	}
	var all []abi.Record
	seen := map[int]bool{}
	for part, rs := range perPart {
		last := -1
		for _, r := range rs {
			if r.version < last {
				t.Fatalf("partition %d: version %d after %d", part, r.version, last)
			}
			last = r.version
			seen[r.version] = true
			all = append(all, abi.Record{Value: []byte(r.value)})
		}
	}
	checkOutput(t, all, total, true)
	if !seen[2] || !seen[3] {
		t.Fatalf("versions seen %v: the deploy and the rollback must both have served records", seen)
	}
	for _, n := range []*runningNode{n1, n2} {
		select {
		case err := <-n.done:
			t.Fatalf("a node stopped during the swaps: %v", err)
		default:
		}
	}
}

// TestHostileDeploysAreRejected deploys every hostile fixture: each is
// refused with a reason, and the running version keeps serving. (Modules
// that run, but not in the step, are TestDeployRefusesAModuleThatDoesNotFitTheStep's.)
func TestHostileDeploysAreRejected(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "hostile", "go/upper.wasm", host.AtLeastOnce, "")
	n := startNode(t, b, p, "one")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fixtures := map[string]string{
		"notwasm.wasm":         "",
		"wat/malformed.wasm":   "",
		"wat/trap.wasm":        "trap",
		"wat/loop.wasm":        "",
		"wat/oom.wasm":         "",
		"wat/outofbounds.wasm": "",
		"wat/negative.wasm":    "",
		"wat/abiv2.wasm":       "ABI",
		"wat/badimport.wasm":   "import",
		"wat/missing.wasm":     "",
		"wat/dropall.wasm":     "map step",
		"wat/sandbox.wasm":     "",
	}
	for f, say := range fixtures {
		_, err := n.node.Deploy(ctx, host.Deployment{Step: "fn", Module: readModule(t, f)})
		var de *host.DeployError
		if !errors.As(err, &de) || de.Code != "invalid_module" {
			t.Errorf("%s: %v, want an invalid_module DeployError", f, err)
			continue
		}
		if !strings.Contains(de.Reason, say) {
			t.Errorf("%s: reason %q does not say %q", f, de.Reason, say)
		}
		t.Logf("%s: %s", f, de.Reason)
	}
	// A smoke test that does not match is refused too.
	_, err := n.node.Deploy(ctx, host.Deployment{Step: "fn", Module: readModule(t, "c/upper.wasm"),
		Sample: []byte(`{"value":"abc"}` + "\n"), Expect: []byte(`{"value":"abc"}` + "\n")})
	var de *host.DeployError
	if !errors.As(err, &de) || de.Code != "smoke_test_failed" || !strings.Contains(de.Reason, "ABC") {
		t.Fatalf("mismatching smoke test: %v", err)
	}
	if _, err := n.node.Deploy(ctx, host.Deployment{Step: "nope", Module: readModule(t, "c/upper.wasm")}); err == nil {
		t.Fatal("deploy to a missing step accepted")
	}
	produceN(t, b, "in", 0, 500)
	out := consumeAll(t, b, "out", 500, time.Second)
	checkOutput(t, out, 500, false)
	for _, r := range out {
		for _, h := range r.Headers {
			if h.Key == host.FunctionHeader("fn") && !strings.HasPrefix(string(h.Value), "v0 ") {
				t.Fatalf("output from version %s after rejected deploys", h.Value)
			}
		}
	}
	_ = io.EOF
}

// waitStep waits until step 0 of a node's status satisfies ok.
func waitStep(t *testing.T, n *host.Node, what string, ok func(host.StepStatus) bool) {
	t.Helper()
	await.Until(t, 10*time.Millisecond, func() bool { return ok(n.Status().Steps[0]) },
		func() string { return fmt.Sprintf("%s: status %+v", what, n.Status().Steps[0]) })
}

// shadowValues produces records [from, to): every third value has no
// letters (upper and passthrough agree on it), the others do.
func shadowValues(t *testing.T, b string, from, to int) {
	var recs []abi.Record
	for i := from; i < to; i++ {
		v := fmt.Sprintf("v%06d", i)
		if i%3 == 0 {
			v = fmt.Sprintf("%07d", i)
		}
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%13)), Value: []byte(v)})
	}
	produceAll(t, []string{b}, "in", recs)
}

// TestShadowDiffAndPromote shadows the live upper-casing map with a
// passthrough: the diff must name exactly the records whose value has
// letters; promoting the shadow then switches the live output without
// losing or duplicating a record.
func TestShadowDiffAndPromote(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "shadow", "go/upper.wasm", host.ExactlyOnce, "")
	n := startNode(t, b, p, "one")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	shadowValues(t, b.Addr(), 0, 300)
	if got := consumeAll(t, b, "out", 300, time.Second); len(got) != 300 {
		t.Fatalf("%d records before the shadow", len(got))
	}
	pass := readModule(t, "go/passthrough.wasm")
	sh, err := n.node.Deploy(ctx, host.Deployment{Step: "fn", Module: pass, Shadow: true, Note: "try passthrough"})
	if err != nil {
		t.Fatal(err)
	}
	waitStep(t, n.node, "shadow running", func(s host.StepStatus) bool { return s.Shadow == sh.Version })
	shadowValues(t, b.Addr(), 300, 900)
	if got := consumeAll(t, b, shadowOut, 600, time.Second); len(got) != 600 {
		t.Fatalf("%d shadow records, want 600", len(got))
	}
	rep, err := host.Diff(ctx, []string{b.Addr()}, "out", shadowOut, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sources != 600 || rep.Same != 200 || len(rep.Differ) != 400 || len(rep.OnlyLive)+len(rep.OnlyShadow) != 0 {
		t.Fatalf("diff: %d sources, %d same, %d differ, %d only live, %d only shadow", rep.Sources, rep.Same, len(rep.Differ),
			len(rep.OnlyLive), len(rep.OnlyShadow))
	}
	for _, d := range rep.Differ {
		lv, sv := string(d.Live[0].Value), string(d.Shadow[0].Value)
		if len(d.Live) != 1 || len(d.Shadow) != 1 || !strings.HasPrefix(sv, "v") || lv != strings.ToUpper(sv) {
			t.Fatalf("differing record %s: live %q shadow %q", d.Source, lv, sv)
		}
	}

	pr, err := n.node.Promote(ctx, "fn", "passthrough it is")
	if err != nil {
		t.Fatal(err)
	}
	waitStep(t, n.node, "promoted", func(s host.StepStatus) bool { return s.Version == pr.Version && s.Shadow == 0 })
	shadowValues(t, b.Addr(), 900, 1200)
	out := consumeAll(t, b, "out", 1200, 2*time.Second)
	seen := map[string]int{}
	for _, r := range out {
		seen[strings.ToLower(string(r.Value))]++
		if n, _ := strconv.Atoi(strings.TrimLeft(strings.ToLower(string(r.Value)), "v0")); n >= 900 {
			if string(r.Value) != strings.ToLower(string(r.Value)) {
				t.Fatalf("record %s after the promotion is upper-cased", r.Value)
			}
			if h := header(r, host.FunctionHeader("fn")); !strings.HasPrefix(h, fmt.Sprintf("v%d ", pr.Version)) {
				t.Fatalf("record %s after the promotion has version header %q", r.Value, h)
			}
		}
	}
	if len(out) != 1200 || len(seen) != 1200 {
		t.Fatalf("live output: %d records, %d distinct; want 1200 each once", len(out), len(seen))
	}
}

var shadowOut = host.ShadowTopic("out")
