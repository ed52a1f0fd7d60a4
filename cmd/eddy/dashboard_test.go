package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
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

// dashboardPage is what the test reads off the page: the data-testid
// elements' text and values.
type dashboardPage struct {
	Conn       string      `json:"conn"`
	Steps      []graphStep `json:"steps"`
	Topics     []string    `json:"topics"`
	In         int64       `json:"in"`
	Out        int64       `json:"out"`
	Dead       int64       `json:"dead"`
	Late       int64       `json:"late"`
	RateIn     string      `json:"rateIn"`
	Points     int         `json:"points"`
	Watermarks []string    `json:"watermarks"`
	Functions  []string    `json:"functions"`
	History    int         `json:"history"`
}

// graphStep is a step's box in the graph.
type graphStep struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Text    string `json:"text"`
}

const readDashboard = `(() => {
	const q = (s) => document.querySelector('[data-testid="' + s + '"]');
	const all = (s) => [...document.querySelectorAll('[data-testid="' + s + '"]')];
	const num = (s) => { const e = q(s); return e && e.dataset.value ? Number(e.dataset.value) : -1; };
	return {
		conn: q("conn").textContent,
		steps: all("graph-step").map((e) => ({name: e.dataset.step, version: e.dataset.version, text: e.textContent})),
		topics: all("graph-topic").map((e) => e.dataset.role + ":" + e.dataset.topic),
		in: num("stat-in"), out: num("stat-out"), dead: num("stat-dead"), late: num("stat-late"),
		rateIn: q("rate-in").textContent,
		points: Number(q("chart-throughput").dataset.points || 0),
		watermarks: all("watermark").map((e) => e.textContent),
		functions: all("function").map((e) => e.textContent),
		history: all("history-row").length,
	};
})()`

// TestDashboardInBrowser runs `eddy run` on a two-stage windowed pipeline
// with records flowing in, deploys a new version of one step, and loads the
// node's dashboard in headless Chromium: the graph must show every step
// with its kind and version, the counters must move between two reads, the
// throughput chart must have points, the partitions table watermarks and
// the functions panel the deploy. It saves full-page screenshots under
// test-output/dashboard/ at the repository root: at load, after a few
// seconds of traffic, and in the dark colour scheme.
func TestDashboardInBrowser(t *testing.T) {
	browser := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	b := testkafka.StartPartitions(t, 2, "orders", "orders-dlq", "orders-late", "counts")
	filter, _ := filepath.Abs(td("go/filter.wasm"))
	count, _ := filepath.Abs(td("go/nx-count.wasm"))
	pipe := filepath.Join(t.TempDir(), "shop.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: shop
source: {topics: [orders]}
steps:
  - {name: big-orders, kind: filter, function: %s}
  - {name: by-customer, kind: key_by, field: customer}
  - name: count
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 1s}
sink: {topic: counts}
dead_letter: {topic: orders-dlq}
late: {topic: orders-late}
delivery: exactly_once
commit_interval: 100ms
`, filter, count)), 0o644)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	addr := freeAddr(t)
	url := "http://" + addr

	stop, runErr := startRun(t, "run", pipe, "--brokers", b.Addr(), "--node-id", "dash-1",
		"--data-dir", t.TempDir(), "--admin-addr", addr, "--admin-token-file", tokenFile)

	// Orders flow in until the test ends, about 500 a second: every 50th
	// malformed (dead-lettered), every 97th a minute old (late once its
	// window has closed), the others with the current time.
	// firstTime and lastTime are the event times of the first and the
	// latest order produced (the watermarks lie between them).
	var firstTime, lastTime atomic.Int64
	prodCtx, stopProducing := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopProducing(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		customers := []string{"ada", "grace", "linus", "barbara", "ken", "margaret"}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		i := 0
		_, err := host.Produce(context.WithoutCancel(prodCtx), []string{b.Addr()}, "orders", func() (abi.Record, error) {
			if i%10 == 0 {
				select {
				case <-prodCtx.Done():
					return abi.Record{}, io.EOF
				case <-tick.C:
				}
			}
			i++
			cust := customers[i%len(customers)]
			ts := time.Now().UnixMilli()
			firstTime.CompareAndSwap(0, ts)
			lastTime.Store(ts)
			v := fmt.Sprintf(`{"order":%d,"customer":%q,"amount":%d}`, i, cust, (i*37)%250+1)
			switch {
			case i%50 == 0:
				v = v[:len(v)/2]
			case i%97 == 0:
				ts -= 60000
			}
			return abi.Record{Key: []byte(cust), Value: []byte(v), Timestamp: ts}, nil
		}, nil)
		if err != nil && prodCtx.Err() == nil {
			t.Errorf("produce: %v", err)
		}
	}()

	cl := &admin.Client{BaseURL: url, Token: "s3cret"}
	await.Until(t, 50*time.Millisecond, func() bool { return cl.Health(ctx) == nil },
		func() string { return "the node's admin API did not become healthy: " + runErr.String() })
	cModule, err := os.ReadFile(td("c/filter.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Deploy(ctx, admin.DeployRequest{Pipeline: "shop", Step: "big-orders", Module: cModule, Note: "C port"}); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if res, err := http.Get(url + "/"); err != nil || res.Request.URL.Path != "/ui/" || res.StatusCode != 200 {
		t.Fatalf("GET / does not lead to the dashboard: %v %v", res, err)
	} else {
		res.Body.Close()
	}

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

	outDir := filepath.Join("..", "..", "test-output", "dashboard")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		p := filepath.Join(outDir, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		abs, _ := filepath.Abs(p)
		t.Logf("screenshot %s (%d bytes)", abs, len(png))
	}
	read := func() dashboardPage {
		t.Helper()
		p, err := chromedp.Run(bctx, chromedp.Evaluate[dashboardPage](readDashboard))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		return p
	}

	if err := chromedp.Do(bctx, chromedp.Navigate(url+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="graph-step"]`))); err != nil {
		t.Fatalf("loading the dashboard: %v", err)
	}
	// Wait for records through both stages and a rate computed.
	var first dashboardPage
	await.Until(t, 200*time.Millisecond, func() bool {
		first = read()
		return first.In > 0 && first.Out > 0 && first.Points >= 1 && len(first.Watermarks) > 0
	}, func() string { return fmt.Sprintf("the dashboard shows no traffic: %+v", first) })
	shot("dashboard-1.png")

	if first.Conn != "live" {
		t.Errorf("connection indicator %q, want live", first.Conn)
	}
	steps := map[string]graphStep{}
	for _, s := range first.Steps {
		steps[s.Name] = s
	}
	for _, want := range []struct{ name, version, text string }{
		{"big-orders", "2", "filter.wasm"},
		{"by-customer", "0", "field customer"},
		{"count", "0", "aggregate · tumbling 1s"},
	} {
		s := steps[want.name]
		if s.Version != want.version || !strings.Contains(s.Text, want.name) || !strings.Contains(s.Text, want.text) {
			t.Errorf("graph step %s: %+v, want version %s and %q in %+v", want.name, s, want.version, want.text, first.Steps)
		}
	}
	if !strings.Contains(steps["big-orders"].Text, "v2") {
		t.Errorf("graph step big-orders does not show its live version: %q", steps["big-orders"].Text)
	}
	topics := strings.Join(first.Topics, " ")
	for _, want := range []string{"source:orders", "repartition:" + host.RepartitionTopic("shop", "by-customer"), "sink:counts", "dead_letter:orders-dlq", "late:orders-late"} {
		if !strings.Contains(topics, want) {
			t.Errorf("graph topics %q lack %s", first.Topics, want)
		}
	}

	// The page's counters and chart move while orders flow. The output
	// moves as windows close and transactions commit, which on a loaded
	// machine (against Apache Kafka) can take longer than any fixed wait:
	// the page must show it moving, whenever it does.
	var second dashboardPage
	await.Until(t, 200*time.Millisecond, func() bool {
		second = read()
		return second.In > first.In && second.Out > first.Out && second.Points >= first.Points+2
	}, func() string {
		return fmt.Sprintf("counters did not move: in %d → %d, out %d → %d; throughput chart: %d points, then %d",
			first.In, second.In, first.Out, second.Out, first.Points, second.Points)
	})
	// The rate is the input counter's change between the page's last two
	// polls, a second apart: on a loaded machine one second can pass
	// without a record (the node works in transactions), so the page must
	// show a rate while the orders flow, not at one given poll.
	rate := second.RateIn
	await.Until(t, 200*time.Millisecond, func() bool {
		rate = read().RateIn
		return rate != "–" && rate != "0.0"
	}, func() string { return fmt.Sprintf("rate in %q while orders flow", rate) })
	if second.Dead <= 0 || second.Late <= 0 {
		t.Errorf("dead-lettered %d, late %d: want both counted", second.Dead, second.Late)
	}
	// A watermark is the least of its inputs' largest event times (no
	// disorder allowed), so it lies between the first order's time and the
	// latest's; the page shows it in UTC to the millisecond.
	wmRE := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$`)
	lo, hi := time.UnixMilli(firstTime.Load()).UTC(), time.UnixMilli(lastTime.Load()).UTC()
	for _, w := range second.Watermarks {
		wt, err := time.Parse("2006-01-02 15:04:05.000", w)
		if !wmRE.MatchString(w) || err != nil || wt.Before(lo) || wt.After(hi) {
			t.Errorf("watermark %q: want a UTC time between the orders' first (%s) and latest (%s)", w, lo, hi)
		}
	}
	fns := strings.Join(second.Functions, "\n")
	if !strings.Contains(fns, "live v2") || !strings.Contains(fns, "C port") || !strings.Contains(fns, "deploy") || second.History < 2 {
		t.Errorf("functions panel (%d history rows):\n%s", second.History, fns)
	}
	// Let the charts gather a few more seconds for the picture.
	time.Sleep(2 * time.Second)
	shot("dashboard-2.png")
	// The same page in the dark colour scheme.
	if err := chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	}), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatalf("dark scheme: %v", err)
	}
	shot("dashboard-3-dark.png")
	jsMu.Lock()
	if len(jsErrs) > 0 {
		t.Errorf("the page threw: %q", jsErrs)
	}
	jsMu.Unlock()

	stopProducing()
	wg.Wait()
	stop()
	if !strings.Contains(runErr.String(), "dashboard="+url+"/ui/") {
		t.Errorf("eddy run's log does not give the dashboard's URL:\n%s", runErr.String())
	}
}
