package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin/dashboard"
	eddyrt "github.com/eddy-streams/eddy/runtime"
)

// chromium returns the path of a headless-capable Chromium: $EDDY_CHROMIUM,
// else chromium or chromium-browser on PATH. Without one the test fails
// (CI installs it), or skips under -short.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EDDY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "headless Chromium not found (chromium or chromium-browser on PATH, or EDDY_CHROMIUM): run scripts/install-toolchains.sh, which installs Debian's chromium"
	if testing.Short() {
		t.Skip(msg)
	}
	t.Fatal(msg)
	return ""
}

// box is an element's rectangle in the graph's coordinates.
type box struct{ X, Y, W, H float64 }

func (a box) overlaps(b box) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func (a box) contains(b box) bool {
	return a.X <= b.X && a.Y <= b.Y && b.X+b.W <= a.X+a.W && b.Y+b.H <= a.Y+a.H
}

// graphPage is what the test reads off the graph: its steps, topics, taps
// (to: topics), edges (from > to, each end a step's name or role:topic)
// and groups (a branch step's branches, a step's named outputs).
type graphPage struct {
	Steps []struct {
		Name, Kind, Of string
		Box            box
	}
	Topics []struct {
		Name string
		Box  box
	}
	Taps []struct {
		Topic, Step string
		Box         box
	}
	Edges  []string
	Groups []struct {
		Of, Kind, Text string
		Box            box
	}
	Width, Height float64
}

const readGraph = `(() => {
	const all = (s) => [...document.querySelectorAll('[data-testid="' + s + '"]')];
	const box = (e) => { const r = e.querySelector("rect").getBBox(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; };
	const vb = document.getElementById("graph").viewBox.baseVal;
	return {
		Steps: all("graph-step").map((e) => ({Name: e.dataset.step, Kind: e.dataset.kind, Of: e.dataset.of || "", Box: box(e)})),
		Topics: all("graph-topic").map((e) => ({Name: e.dataset.role + ":" + e.dataset.topic, Box: box(e)})),
		Taps: all("graph-tap").map((e) => ({Topic: e.dataset.topic, Step: e.dataset.step, Box: box(e)})),
		Edges: all("graph-edge").map((e) => e.dataset.from + " > " + e.dataset.to),
		Groups: all("graph-group").map((e) => ({Of: e.dataset.of, Kind: e.dataset.kind, Box: box(e),
			Text: all("graph-group-label").filter((l) => l.dataset.of === e.dataset.of).map((l) => l.textContent).join("|")})),
		Width: vb.width, Height: vb.height,
	};
})()`

// graphCase is a pipeline and what its graph must show.
type graphCase struct {
	name, yaml string
	steps      []string // name:kind, in order
	topics     []string // role:topic (sources, repartition, sink, dead letter, late when windows close)
	taps       []string // topic<step
	groups     []string // of:kind:label
	edges      []string // from > to
}

var graphCases = []graphCase{{
	// Two filters read the two sources (from: [source]) and write to
	// topics of their own; a map merges what they keep into the sink.
	name: "merge",
	yaml: `name: engagement
source: {topics: [events, more-events]}
steps:
  - {name: clicks, kind: filter, function: "native:pass", from: [source], to: clicks}
  - {name: views, kind: filter, function: "native:pass", from: [source], to: views}
  - {name: both, kind: map, function: "native:pass", from: [clicks, views]}
sink: {topic: engagement}
dead_letter: {topic: engagement-dlq}
`,
	steps:  []string{"clicks:filter", "views:filter", "both:map"},
	topics: []string{"source:events", "source:more-events", "sink:engagement", "dead_letter:engagement-dlq"},
	taps:   []string{"clicks<clicks", "views<views"},
	edges: []string{
		"source:events > clicks", "source:more-events > clicks",
		"source:events > views", "source:more-events > views", // over clicks, which views does not read
		"clicks > both", "views > both",
		"both > sink:engagement",
		"clicks > tap:clicks", "views > tap:views",
		"stage:0 > dead_letter:engagement-dlq",
	},
}, {
	// A step's function routes records to named outputs; later steps read
	// an output, and the routing step's own output.
	name: "outputs",
	yaml: `name: route
source: {topics: [in]}
steps:
  - name: route
    kind: map
    function: "native:pass"
    outputs: [objects, {name: numbers, to: numbers}]
  - {name: enrich, kind: map, function: "native:pass", from: [route.objects], to: enriched}
  - {name: words, kind: map, function: "native:pass", from: [route]}
sink: {topic: words}
`,
	steps:  []string{"route:map", "route.objects:output", "route.numbers:output", "enrich:map", "words:map"},
	topics: []string{"source:in", "sink:words", "dead_letter:route-dlq"},
	taps:   []string{"numbers<route.numbers", "enriched<enrich"},
	groups: []string{"route:outputs:outputs of route"},
	edges: []string{
		"source:in > route",
		"route > route.objects", "route > route.numbers",
		"route.objects > enrich", "route > words",
		"words > sink:words",
		"route.numbers > tap:numbers", "enrich > tap:enriched",
		"stage:0 > dead_letter:route-dlq",
	},
}, {
	// The pipeline ends with a branch step: no sink; each branch reads
	// what the one before did not take.
	name: "branches",
	yaml: `name: by-type
source: {topics: [events]}
steps:
  - {name: parse, kind: map, function: "native:pass"}
  - name: by-type
    kind: branch
    branches:
      - {name: bids, function: "native:pass", to: bids}
      - {name: auctions, function: "native:pass", to: auctions}
      - {name: people, to: people}
`,
	steps:  []string{"parse:map", "by-type.bids:filter", "by-type.auctions:filter", "by-type.people:output"},
	topics: []string{"source:events", "dead_letter:by-type-dlq"}, // no sink
	taps:   []string{"bids<by-type.bids", "auctions<by-type.auctions", "people<by-type.people"},
	groups: []string{"by-type:branch:branch by-type"},
	edges: []string{
		"source:events > parse",
		"parse > by-type.bids", "by-type.bids > by-type.auctions", "by-type.auctions > by-type.people",
		"by-type.bids > tap:bids", "by-type.auctions > tap:auctions", "by-type.people > tap:people",
		"stage:0 > dead_letter:by-type-dlq",
	},
}, {
	// Three outputs, each read by a step of its own, and a step that
	// merges them with the routing step's own output: many lanes.
	name: "fan",
	yaml: `name: fan
source: {topics: [in]}
steps:
  - {name: split, kind: map, function: "native:pass", outputs: [a, b, c]}
  - {name: ua, kind: map, function: "native:pass", from: [split.a], to: ua}
  - {name: ub, kind: map, function: "native:pass", from: [split.b], to: ub}
  - {name: uc, kind: map, function: "native:pass", from: [split.c], to: uc}
  - {name: all, kind: map, function: "native:pass", from: [ua, ub, uc, split]}
sink: {topic: all}
`,
	steps:  []string{"split:map", "split.a:output", "split.b:output", "split.c:output", "ua:map", "ub:map", "uc:map", "all:map"},
	topics: []string{"source:in", "sink:all", "dead_letter:fan-dlq"},
	taps:   []string{"ua<ua", "ub<ub", "uc<uc"},
	groups: []string{"split:outputs:outputs of split"},
	edges: []string{
		"source:in > split",
		"split > split.a", "split > split.b", "split > split.c",
		"split.a > ua", "split.b > ub", "split.c > uc",
		"ua > all", "ub > all", "uc > all", "split > all",
		"all > sink:all",
		"ua > tap:ua", "ub > tap:ub", "uc > tap:uc",
		"stage:0 > dead_letter:fan-dlq",
	},
}, {
	// A step reads a step before a join (its lane passes under the
	// table's arrow), another the join.
	name: "join",
	yaml: `name: shop
source: {topics: [orders]}
tables:
  - {name: customers, topic: customers}
steps:
  - {name: clean, kind: map, function: "native:pass"}
  - {name: with-customer, kind: join, table: customers, type: left}
  - {name: audit, kind: map, function: "native:pass", from: [clean], to: audit}
  - {name: out, kind: map, function: "native:pass", from: [with-customer]}
sink: {topic: enriched}
`,
	steps:  []string{"clean:map", "with-customer:join", "audit:map", "out:map"},
	topics: []string{"source:orders", "table:customers", "sink:enriched", "dead_letter:shop-dlq"},
	taps:   []string{"audit<audit"},
	edges: []string{
		"source:orders > clean",
		"clean > with-customer", "table:customers > with-customer",
		"clean > audit", "with-customer > out",
		"out > sink:enriched",
		"audit > tap:audit",
		"stage:0 > dead_letter:shop-dlq",
	},
}, {
	// Two stages; the second ends with a routing step's named output, so
	// the sink gets the routing step's output.
	name: "stages",
	yaml: `name: alerts
source: {topics: [bids]}
steps:
  - {name: by-auction, kind: key_by, field: auction}
  - name: counts
    kind: aggregate
    function: "native:count"
    window: {type: tumbling, size: 10s}
    to: bid-counts
  - name: tag
    kind: map
    function: "native:pass"
    outputs: [{name: quiet, to: quiet-auctions}]
sink: {topic: busy-auctions}
dead_letter: {topic: alerts-dlq}
late: {topic: alerts-late}
`,
	steps: []string{"by-auction:key_by", "counts:aggregate", "tag:map", "tag.quiet:output"},
	topics: []string{"source:bids", "repartition:" + host.RepartitionTopic("alerts", "by-auction"), "sink:busy-auctions",
		"dead_letter:alerts-dlq", "late:alerts-late"},
	taps:   []string{"bid-counts<counts", "quiet-auctions<tag.quiet"},
	groups: []string{"tag:outputs:outputs of tag"},
	edges: []string{
		"source:bids > by-auction",
		"by-auction > repartition:" + host.RepartitionTopic("alerts", "by-auction"),
		"repartition:" + host.RepartitionTopic("alerts", "by-auction") + " > counts",
		"counts > tag", "tag > tag.quiet",
		"tag > sink:busy-auctions", // over tag.quiet
		"counts > tap:bid-counts", "tag.quiet > tap:quiet-auctions",
		"stage:0 > dead_letter:alerts-dlq", "stage:1 > dead_letter:alerts-dlq",
		"counts > late:alerts-late",
	},
}}

// TestGraphLateTopic: a node's graph has the late topic only when its
// pipeline can send records there, when it has windows that close (an
// aggregate's but a global one, a stream-stream join's): not for the
// stateless pipelines of graphCases, nor for a global window.
func TestGraphLateTopic(t *testing.T) {
	eng, err := eddyrt.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	cases := map[string]string{} // name → its late topic, "" for none
	yamls := map[string]string{}
	for _, tc := range graphCases {
		yamls[tc.name] = tc.yaml
		for _, tp := range tc.topics {
			if l, ok := strings.CutPrefix(tp, "late:"); ok {
				cases[tc.name] = l
			}
		}
		if _, ok := cases[tc.name]; !ok {
			cases[tc.name] = ""
		}
	}
	yamls["global"] = `name: tally
source: {topics: [in]}
steps:
  - {name: by-key, kind: key_by, field: k}
  - {name: every, kind: aggregate, function: "native:count", window: {type: global, count: 10}}
sink: {topic: out}
`
	cases["global"] = ""
	yamls["stream-join"] = `name: pairs
source: {topics: [clicks]}
steps:
  - {name: with-views, kind: join, stream: views, window: {before: 5s, after: 5s, grace: 1s}}
sink: {topic: out}
`
	cases["stream-join"] = "pairs-late"
	for name, want := range cases {
		if got := statusOf(t, eng, name, yamls[name]).Graph.Late; got != want {
			t.Errorf("%s: late topic %q, want %q", name, got, want)
		}
	}
}

// statusOf returns the status of a node of the pipeline (not running: the
// graph and the steps are what matter here).
func statusOf(t *testing.T, eng *eddyrt.Engine, name, src string) host.NodeStatus {
	t.Helper()
	p, err := host.ParsePipeline(name+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	pass := func() eddyrt.Native {
		return eddyrt.Native{Process: func(rec *abi.Record, emit func(abi.Record)) error { emit(*rec); return nil }}
	}
	count := func() eddyrt.Native {
		return eddyrt.Native{
			AggInit:   func() []byte { return nil },
			AggAdd:    func(acc []byte, _ *abi.Record) ([]byte, error) { return append(acc, 1), nil },
			AggMerge:  func(_, a, b []byte) ([]byte, error) { return append(slices.Clone(a), b...), nil },
			AggResult: func(_, acc []byte) ([]byte, error) { return fmt.Appendf(nil, "%d", len(acc)), nil },
		}
	}
	n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: []string{"127.0.0.1:1"}, NodeID: "graph-1",
		Engine: eng, DataDir: t.TempDir(), Natives: map[string]func() eddyrt.Native{"pass": pass, "count": count}})
	if err != nil {
		t.Fatal(err)
	}
	return n.Status()
}

// TestGraphInBrowser draws the graphs of pipelines with from:, to:, branch
// steps and named outputs in headless Chromium, from the status of a node
// of each, and checks the SVG: every step, the edges from the steps each
// reads (none between neighbours that do not read each other), the to:
// topics under their steps, the groups of branches and outputs, the
// stage's output from the step whose output goes there, and that no two
// boxes overlap. It saves a screenshot of each graph under
// test-output/dashboard/ at the repository root.
func TestGraphInBrowser(t *testing.T) {
	browser := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	eng, err := eddyrt.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	var jsMu sync.Mutex
	var jsErrs []string
	if err := chromedp.Listen(bctx, func(ev any) {
		jsMu.Lock()
		defer jsMu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			jsErrs = append(jsErrs, fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber+1, msg))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" {
				jsErrs = append(jsErrs, fmt.Sprintf("console.error with %d arguments", len(ev.Args)))
			}
		}
	}); err != nil {
		t.Fatalf("starting Chromium %s: %v", browser, err)
	}
	outDir := filepath.Join("..", "..", "..", "test-output", "dashboard")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range graphCases {
		t.Run(tc.name, func(t *testing.T) {
			status, err := json.Marshal(statusOf(t, eng, tc.name, tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle(dashboard.Prefix, dashboard.Handler())
			mux.HandleFunc("/v1/status", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(status)
			})
			mux.HandleFunc("/v1/functions", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"functions":[]}`))
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()

			if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="graph-stage"]`))); err != nil {
				t.Fatalf("loading the dashboard: %v", err)
			}
			g, err := chromedp.Run(bctx, chromedp.Evaluate[graphPage](readGraph))
			if err != nil {
				t.Fatalf("reading the graph: %v", err)
			}
			png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS(`[aria-labelledby="graph-h"]`)))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			shot := filepath.Join(outDir, "graph-"+tc.name+".png")
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(shot)
			t.Logf("screenshot %s", abs)
			if tc.name == "outputs" {
				// The same graph in the dark colour scheme, then back.
				scheme := func(v string) chromedp.Action[chromedp.Void] {
					return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
						_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
							Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
						return err
					})
				}
				if err := chromedp.Do(bctx, scheme("dark"), chromedp.Sleep(300*time.Millisecond)); err != nil {
					t.Fatalf("dark scheme: %v", err)
				}
				png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS(`[aria-labelledby="graph-h"]`)))
				if err != nil {
					t.Fatalf("screenshot: %v", err)
				}
				if err := os.WriteFile(filepath.Join(outDir, "graph-"+tc.name+"-dark.png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(bctx, scheme("light")); err != nil {
					t.Fatalf("light scheme: %v", err)
				}
			}

			var steps []string
			stepBox := map[string]box{}
			for _, s := range g.Steps {
				steps = append(steps, s.Name+":"+s.Kind)
				stepBox[s.Name] = s.Box
			}
			same(t, "steps", steps, tc.steps, true)
			var topics, taps, groups []string
			for _, tp := range g.Topics {
				topics = append(topics, tp.Name)
			}
			for _, tp := range g.Taps {
				taps = append(taps, tp.Topic+"<"+tp.Step)
				// Under its step.
				if sb := stepBox[tp.Step]; tp.Box.Y < sb.Y+sb.H {
					t.Errorf("tap %s at y %.0f is not below step %s (%+v)", tp.Topic, tp.Box.Y, tp.Step, sb)
				}
			}
			for _, gr := range g.Groups {
				label := "outputs of " + gr.Of
				if gr.Kind == "branch" {
					label = "branch " + gr.Of
				}
				if gr.Text != label {
					t.Errorf("group of %s does not say %q: %q", gr.Of, label, gr.Text)
					label = gr.Text
				}
				groups = append(groups, gr.Of+":"+gr.Kind+":"+label)
				// Around its steps.
				for _, s := range g.Steps {
					if s.Of == gr.Of && !gr.Box.contains(s.Box) {
						t.Errorf("group %s (%+v) does not hold its step %s (%+v)", gr.Of, gr.Box, s.Name, s.Box)
					}
				}
			}
			same(t, "topics", topics, tc.topics, false)
			same(t, "taps", taps, tc.taps, false)
			same(t, "groups", groups, tc.groups, false)
			same(t, "edges", g.Edges, tc.edges, false)

			// Readable: no box over another, all in the picture.
			type named struct {
				name string
				b    box
			}
			var all []named
			for _, s := range g.Steps {
				all = append(all, named{"step " + s.Name, s.Box})
			}
			for _, tp := range g.Topics {
				all = append(all, named{"topic " + tp.Name, tp.Box})
			}
			for _, tp := range g.Taps {
				all = append(all, named{"tap " + tp.Topic, tp.Box})
			}
			pic := box{0, 0, g.Width, g.Height}
			for i, a := range all {
				if !pic.contains(a.b) {
					t.Errorf("%s (%+v) is outside the picture (%.0f×%.0f)", a.name, a.b, g.Width, g.Height)
				}
				for _, b := range all[i+1:] {
					if a.b.overlaps(b.b) {
						t.Errorf("%s (%+v) overlaps %s (%+v)", a.name, a.b, b.name, b.b)
					}
				}
			}
		})
	}
	jsMu.Lock()
	defer jsMu.Unlock()
	if len(jsErrs) > 0 {
		t.Errorf("the page threw: %q", jsErrs)
	}
}

// same reports got and want differing, in order or as sets.
func same(t *testing.T, what string, got, want []string, ordered bool) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	if !ordered {
		slices.Sort(g)
		slices.Sort(w)
	}
	if !slices.Equal(g, w) {
		t.Errorf("%s:\n got %q\nwant %q", what, g, w)
	}
}
