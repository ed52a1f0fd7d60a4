package host_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/jsonfield"
	"github.com/eddy-streams/eddy/runtime"
)

// TestBranchesAndNamedOutputs runs a graph under exactly_once: the Go
// guest route sends JSON objects to its output objects and numbers to its
// output numbers (written to a topic); a branch step splits the objects
// into small ones (to a topic), "odd" ones (n%4 == 1) and the rest (to a
// topic); a step
// merges the odd objects with what route kept (words) into the sink. Every
// record must come out once, in the one place the graph sends it, without
// the eddy.output header.
func TestBranchesAndNamedOutputs(t *testing.T) {
	b := startBroker(t, "in", "out", "numbers", "small", "rest", "dlq")
	route, err := filepath.Abs(filepath.Join("..", "testdata", "go", "route.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	p := loadPipeline(t, fmt.Sprintf(`name: fan
source: {topics: [in]}
steps:
  - name: route
    kind: map
    function: %s
    outputs: [objects, {name: numbers, to: numbers}]
  - name: kinds
    kind: branch
    from: [route.objects]
    branches:
      - {name: small, function: "native:small", to: small}
      - {name: odd, function: "native:odd"}
      - {name: rest, to: rest}
  - {name: tag, kind: map, function: "native:tag", from: [kinds.odd, route]}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 64
`, route))
	const total = 3000
	var recs []abi.Record
	want := map[string][]string{} // topic: values
	for i := range total {
		var v string
		// Uneven shares (objects 1/2, numbers and words 1/4 each; of the
		// objects, small 1/4, "odd" 7/40), so that the metrics' identities
		// below cannot hold by chance.
		switch i % 4 {
		case 0, 1:
			v = fmt.Sprintf(`{"n":%d}`, i%40)
			switch n := i % 40; {
			case n < 10:
				want["small"] = append(want["small"], v)
			case n%4 == 1:
				want["out"] = append(want["out"], "t:"+v)
			default:
				want["rest"] = append(want["rest"], v)
			}
		case 2:
			v = strconv.Itoa(i)
			want["numbers"] = append(want["numbers"], v)
		default:
			v = "w" + strconv.Itoa(i)
			want["out"] = append(want["out"], "t:"+v)
		}
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 8)), Value: []byte(v), Timestamp: 1700000000000 + int64(i),
			Headers: []abi.Header{{Key: "i", Value: []byte(strconv.Itoa(i))}}})
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	n, err := jsonfield.Parse("n")
	if err != nil {
		t.Fatal(err)
	}
	num := func(r *abi.Record) int64 {
		raw, _ := n.Find(r.Value)
		v, _ := strconv.ParseInt(string(raw), 10, 64)
		return v
	}
	natives := map[string]func() runtime.Native{
		"small": func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
				if num(r) < 10 {
					emit(*r)
				}
				return nil
			}}
		},
		"odd": func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
				if num(r)%4 == 1 {
					emit(*r)
				}
				return nil
			}}
		},
		"tag": func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
				o := *r
				o.Value = append([]byte("t:"), r.Value...)
				emit(o)
				return nil
			}}
		},
	}
	node := startNativeNode(t, b, p, natives)
	for _, topic := range []string{"out", "numbers", "small", "rest"} {
		got := consumeAll(t, b, topic, len(want[topic]), time.Second)
		var vals []string
		for _, r := range got {
			vals = append(vals, string(r.Value))
			if h := header(r, abi.HeaderOutput); h != "" {
				t.Errorf("%s: record %q kept header %s=%q", topic, r.Value, abi.HeaderOutput, h)
			}
			if header(r, "i") == "" {
				t.Errorf("%s: record %q lost its header i", topic, r.Value)
			}
		}
		slices.Sort(vals)
		slices.Sort(want[topic])
		if !slices.Equal(vals, want[topic]) {
			t.Errorf("%s: %d records, want %d (first differences: %s)", topic, len(vals), len(want[topic]), firstDiff(vals, want[topic]))
		}
	}
	if err := nodeErr(node); err != nil {
		t.Fatal(err)
	}
	if got := consumeAll(t, b, "dlq", 0, 500*time.Millisecond); len(got) != 0 {
		t.Errorf("%d dead letters, want none: first %q %q", len(got), got[0].Value, header(got[0], "eddy.error"))
	}
	// Each step's metrics count its own input and output, wherever they
	// come from and go: a batch processed again after an abort changes
	// every count alike, so identities are checked, not totals.
	rec := httptest.NewRecorder()
	node.node.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	metric := func(name, step string) int {
		m := regexp.MustCompile(`(?m)^` + name + `\{[^}]*step="` + regexp.QuoteMeta(step) + `"[^}]*\} (\d+)$`).FindStringSubmatch(rec.Body.String())
		if m == nil {
			t.Fatalf("no %s{step=%q}", name, step)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	in := func(step string) int { return metric("eddy_step_records_in_total", step) }
	out := func(step string) int { return metric("eddy_step_records_out_total", step) }
	for _, c := range []struct {
		what        string
		left, right int
	}{
		{"route in = its own out + routed", in("route"), out("route") + in("route.objects") + in("route.numbers")},
		{"kinds.small in = route.objects out", in("kinds.small"), out("route.objects")},
		{"kinds.odd in = what kinds.small did not take", in("kinds.odd"), in("kinds.small") - out("kinds.small")},
		{"kinds.rest in = what kinds.odd did not take", in("kinds.rest"), in("kinds.odd") - out("kinds.odd")},
		{"tag in = kinds.odd out + route out", in("tag"), out("kinds.odd") + out("route")},
		{"tag out = tag in", out("tag"), in("tag")},
	} {
		if c.left != c.right || c.left == 0 {
			t.Errorf("metrics: %s: %d, %d", c.what, c.left, c.right)
		}
	}
	st := node.node.Status()
	var names []string
	for _, s := range st.Steps {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "route route.objects route.numbers kinds.small kinds.odd kinds.rest tag" {
		t.Errorf("status steps %v", names)
	}
}

// TestOutputErrors sends records of one step to an output it does not
// have: each such input is dead-lettered once, with a reason naming the
// output, and the others go on; on a step without outputs the header is an
// ordinary one and stays.
func TestOutputErrors(t *testing.T) {
	b := startBroker(t, "in", "out", "evens", "dlq")
	p := loadPipeline(t, `name: bad-outputs
source: {topics: [in]}
steps:
  - {name: route, kind: flat_map, function: "native:route", outputs: [{name: evens, to: evens}]}
  - {name: keep, kind: map, function: "native:same"}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`)
	const total = 300
	var recs []abi.Record
	for i := range total {
		recs = append(recs, abi.Record{Key: []byte("k"), Value: []byte(strconv.Itoa(i)), Timestamp: 1700000000000 + int64(i)})
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	natives := map[string]func() runtime.Native{
		// Even numbers to evens; numbers ending in 5: twice to an output
		// "nope" and once unrouted; others unrouted, with a header
		// eddy.output that the next step (no outputs) keeps.
		"route": func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
				i, _ := strconv.Atoi(string(r.Value))
				o := *r
				switch {
				case i%2 == 0:
					o.Headers = []abi.Header{{Key: abi.HeaderOutput, Value: []byte("evens")}}
					emit(o)
				case i%10 == 5:
					bad := o
					bad.Headers = []abi.Header{{Key: abi.HeaderOutput, Value: []byte("nope")}}
					emit(bad)
					emit(bad)
					emit(o)
				default:
					emit(o)
				}
				return nil
			}}
		},
		"same": func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
				o := *r
				o.Headers = append(slices.Clone(r.Headers), abi.Header{Key: abi.HeaderOutput, Value: []byte("ignored")})
				emit(o)
				return nil
			}}
		},
	}
	node := startNativeNode(t, b, p, natives)
	evens := consumeAll(t, b, "evens", total/2, time.Second)
	out := consumeAll(t, b, "out", total/2, time.Second)
	dlq := consumeAll(t, b, "dlq", total/10, time.Second)
	if len(evens) != total/2 || len(out) != total/2 || len(dlq) != total/10 {
		t.Fatalf("evens %d, out %d, dead letters %d; want %d, %d, %d", len(evens), len(out), len(dlq), total/2, total/2, total/10)
	}
	for _, r := range out {
		if header(r, abi.HeaderOutput) != "ignored" {
			t.Fatalf("out: %q lost the header the step without outputs wrote", r.Value)
		}
	}
	for _, r := range dlq {
		i, _ := strconv.Atoi(string(r.Value))
		if why := header(r, "eddy.error"); i%10 != 5 || !strings.Contains(why, `names output "nope"`) || header(r, "eddy.step") != "route" {
			t.Errorf("dead letter %q: step %q, error %q", r.Value, header(r, "eddy.step"), why)
		}
	}
	if err := nodeErr(node); err != nil {
		t.Fatal(err)
	}
}

// firstDiff describes the first values only one of two sorted lists has.
func firstDiff(a, b []string) string {
	var only []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			only = append(only, "extra "+v)
		}
	}
	for _, v := range b {
		if !slices.Contains(a, v) {
			only = append(only, "missing "+v)
		}
	}
	if len(only) > 5 {
		only = only[:5]
	}
	return strings.Join(only, ", ")
}

// TestBranchStepLast runs a pipeline that ends with a branch step and has
// no sink: records go to their branches' topics only, first match first,
// and the ones no branch takes are dropped and counted.
func TestBranchStepLast(t *testing.T) {
	b := startBroker(t, "in", "big", "small", "dlq")
	p := loadPipeline(t, `name: last-branch
source: {topics: [in]}
steps:
  - name: by-size
    kind: branch
    branches:
      - {name: big, function: "native:big", to: big}
      - {name: small, function: "native:small", to: small}
dead_letter: {topic: dlq}
delivery: at_least_once
commit_interval: 50ms
`)
	const total = 900
	var recs []abi.Record
	for i := range total {
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i % 7)), Value: []byte(strconv.Itoa(i % 300)), Timestamp: 1700000000000 + int64(i)})
	}
	produceAll(t, []string{b.Addr()}, "in", recs)
	above := func(n int) func() runtime.Native {
		return func() runtime.Native {
			return runtime.Native{Process: func(r *abi.Record, emit func(abi.Record)) error {
				if v, _ := strconv.Atoi(string(r.Value)); v >= n {
					emit(*r)
				}
				return nil
			}}
		}
	}
	// big: 200 and more; small: 100 and more (of what big left): 100..199;
	// below 100 nobody takes.
	node := startNativeNode(t, b, p, map[string]func() runtime.Native{"big": above(200), "small": above(100)})
	for topic, want := range map[string][2]int{"big": {200, 300}, "small": {100, 200}} {
		got := consumeAll(t, b, topic, total/3, time.Second)
		if len(got) != total/3 {
			t.Errorf("%s: %d records, want %d", topic, len(got), total/3)
		}
		for _, r := range got {
			if v, _ := strconv.Atoi(string(r.Value)); v < want[0] || v >= want[1] {
				t.Errorf("%s: %d is not in [%d, %d)", topic, v, want[0], want[1])
			}
		}
	}
	if err := nodeErr(node); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	node.node.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	line := regexp.MustCompile(`(?m)^eddy_step_records_dropped_total\{[^}]*step="by-size.small"[^}]*\} (\d+)$`).FindStringSubmatch(rec.Body.String())
	if line == nil || line[1] != strconv.Itoa(total/3) {
		t.Errorf("eddy_step_records_dropped_total{step=by-size.small}: %q, want %d", line, total/3)
	}
}

// TestDeployToABranch deploys a new version of a branch's predicate by the
// branch's step name; a branch without a function runs none and refuses a
// deploy.
func TestDeployToABranch(t *testing.T) {
	b := startBroker(t, "in", "big", "rest", "dlq")
	filter, err := filepath.Abs(filepath.Join("..", "testdata", "go", "filter.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	p := loadPipeline(t, fmt.Sprintf(`name: deploy-branch
source: {topics: [in]}
steps:
  - name: kinds
    kind: branch
    branches: [{name: big, function: %s, to: big}, {name: rest, to: rest}]
dead_letter: {topic: dlq}
`, filter))
	n := startNode(t, b, p, "a")
	defer n.stop(t)
	ctx := context.Background()
	ev, err := n.node.Deploy(ctx, host.Deployment{Step: "kinds.big", Module: readModule(t, "c/filter.wasm")})
	if err != nil || ev.Version != 2 { // v1 is the pipeline file's module
		t.Fatalf("deploy to branch kinds.big: version %d, %v", ev.Version, err)
	}
	if _, err := n.node.Deploy(ctx, host.Deployment{Step: "kinds.rest", Module: readModule(t, "c/filter.wasm")}); err == nil ||
		!strings.Contains(err.Error(), "step kinds.rest is rest of step kinds: it runs no function") {
		t.Fatalf("deploy to a branch without a function: %v", err)
	}
	if _, err := n.node.Deploy(ctx, host.Deployment{Step: "kinds", Module: readModule(t, "c/filter.wasm")}); err == nil ||
		!strings.Contains(err.Error(), `has no step "kinds"`) {
		t.Fatalf("deploy to the branch step itself: %v", err)
	}
}
