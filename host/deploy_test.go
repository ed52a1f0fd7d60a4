package host_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/runtime"
)

// TestDeployRefusesAModuleThatDoesNotFitTheStep deploys to a stateless map
// step modules that load but cannot run there: one that imports the
// keyed-state calls (every record would be dead-lettered), one that sets
// timers, one without the process kind. Each is refused with the reason,
// through the node and through its admin API (422 incompatible_module),
// before anything is written to the registry; a module that fits is then
// deployed.
func TestDeployRefusesAModuleThatDoesNotFitTheStep(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := pipeline(t, "fit", "go/upper.wasm", host.AtLeastOnce, "")
	n := startNode(t, b, p, "one")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct {
		module string
		say    []string
	}{
		{"go/counter.wasm", []string{"the module does not fit step fn: it imports eddy.state_get, eddy.state_put, but the step has no keyed state"}},
		{"go/remind.wasm", []string{"it imports eddy.timer_set and answers timers (the timer kind), but the step has no timers"}},
		{"go/dedupe.wasm", []string{"it imports eddy.state_get, eddy.state_put, eddy.state_delete, but the step has no keyed state",
			"; it imports eddy.timer_set and answers timers (the timer kind), but the step has no timers"}},
		{"go/stats.wasm", []string{"a map step calls the process kind, and the module's manifest has only aggregate"}},
	} {
		_, err := n.node.Deploy(ctx, host.Deployment{Step: "fn", Module: readModule(t, tc.module)})
		var de *host.DeployError
		if !errors.As(err, &de) || de.Code != "incompatible_module" {
			t.Errorf("%s: %v, want an incompatible_module DeployError", tc.module, err)
			continue
		}
		for _, s := range tc.say {
			if !strings.Contains(de.Reason, s) {
				t.Errorf("%s: reason %q does not say %q", tc.module, de.Reason, s)
			}
		}
	}
	_, err := n.node.Admin().Deploy(ctx, admin.DeployRequest{Pipeline: "fit", Step: "fn", Module: readModule(t, "go/counter.wasm")})
	if ae := admin.AsError(err); ae == nil || ae.Status != http.StatusUnprocessableEntity || ae.Code != admin.CodeIncompatibleModule ||
		!strings.Contains(ae.Message, "no keyed state") {
		t.Fatalf("deploy through the admin API: %v, want 422 incompatible_module", err)
	}
	st, err := n.node.Admin().History(ctx, "fit", "fn")
	if err != nil || len(st.History) != 0 {
		t.Fatalf("refused deploys wrote to the registry: %+v, %v", st.History, err)
	}
	ev, err := n.node.Deploy(ctx, host.Deployment{Step: "fn", Module: readModule(t, "c/upper.wasm")})
	if err != nil || ev.Version != 2 { // v1 is the pipeline file's module
		t.Fatalf("a deploy that fits: version %d, %v", ev.Version, err)
	}
}

// TestDeployFitIsCheckedWhenANodeStarts: a node whose pipeline file gives
// a step a module that does not fit it does not start, and says why.
func TestDeployFitIsCheckedWhenANodeStarts(t *testing.T) {
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	abs := func(m string) string {
		p, err := filepath.Abs(filepath.Join("..", "testdata", m))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// In steps, %[1]s is the module's path and %[2]s stats.wasm's.
	for _, tc := range []struct {
		name, module, steps, want string
	}{
		{"state calls without state", "go/counter.wasm", "  - {name: count, kind: map, function: %[1]s}\n",
			"step count: %s does not fit the step: it imports eddy.state_get, eddy.state_put, " +
				"but the step has no keyed state (state: true in the pipeline file gives it a store)"},
		{"no process kind", "go/stats.wasm", "  - {name: count, kind: filter, function: %[1]s}\n",
			"step count: %s does not fit the step: a filter step calls the process kind, and the module's manifest has only aggregate"},
		{"time function without the timestamp kind", "go/upper.wasm", "  - {name: by, kind: key_by, field: k}\n" +
			"  - {name: count, kind: aggregate, function: %[2]s, time_function: %[1]s, window: {type: tumbling, size: 1s}}\n",
			"step count: time_function: %s does not fit the step: a time_function calls the timestamp kind, " +
				"and the module's manifest has only process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := fmt.Sprintf(tc.steps, abs(tc.module), abs("go/stats.wasm"))
			p := loadPipeline(t, "name: fit\nsource: {topics: [in]}\nsteps:\n"+steps+"sink: {topic: out}\n")
			_, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: []string{"127.0.0.1:1"}, Engine: eng, Logger: testLogger(t)})
			if want := fmt.Sprintf(tc.want, abs(tc.module)); err == nil || err.Error() != want {
				t.Fatalf("NewNode: %v\nwant %s", err, want)
			}
		})
	}
	// One module as a key function, a stateful map and an aggregate: its
	// state calls are its map's, and it fits each step.
	q16 := abs("go/nx-q16.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: fit
source: {topics: [in]}
steps:
  - {name: by-channel, kind: key_by, function: %[1]s}
  - {name: distinct, kind: map, function: %[1]s, state: true}
  - {name: stats, kind: aggregate, function: %[1]s, window: {type: tumbling, size: 24h}}
sink: {topic: out}
`, q16))
	if _, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: []string{"127.0.0.1:1"}, Engine: eng, Logger: testLogger(t)}); err != nil {
		t.Fatalf("a module that fits each of its steps: %v", err)
	}
}
