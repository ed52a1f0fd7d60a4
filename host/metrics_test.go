package host_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestMetricsAgreeWithRecords runs filter → key_by → windowed count under
// exactly_once over records of which a fifth fail the filter (dead-lettered)
// and two fifths are filtered out, scrapes /metrics through the node's
// admin server while it runs and after, and checks the counters against
// what the topics actually hold.
func TestMetricsAgreeWithRecords(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	filter, _ := filepath.Abs("../testdata/go/filter.wasm")
	count, _ := filepath.Abs("../testdata/go/nx-count.wasm")
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: metered
source: {topics: [in]}
steps:
  - {name: big, kind: filter, function: %s}
  - {name: by-k, kind: key_by, field: k}
  - name: count
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 10ms}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 100
`, filter, count)), 0o644)
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 6000
	var failed, dropped, kept int
	produce := func(from, to int) {
		i := from
		if _, err := host.Produce(context.Background(), []string{b.Addr()}, "in", func() (abi.Record, error) {
			if i == to {
				return abi.Record{}, io.EOF
			}
			defer func() { i++ }()
			v := fmt.Sprintf(`{"amount":150,"k":"k%d"}`, i%11)
			switch i % 5 {
			case 0:
				v = "not json" // the filter fails on it
				failed++
			case 1, 2:
				v = fmt.Sprintf(`{"amount":50,"k":"k%d"}`, i%11) // filtered out
				dropped++
			default:
				kept++
			}
			return abi.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(v), Timestamp: 1700000000000 + int64(i)}, nil
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, n/2)

	r := startStatefulNode(t, []string{b.Addr()}, p, "m1", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := admin.NewServer(r.node.Admin(), admin.Config{Addr: "127.0.0.1:0",
		Pages: map[string]http.Handler{"/metrics": r.node.Metrics()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-srvDone })

	// Scrape while the node runs: the second half of the input is produced
	// only once a scrape has seen records come in, so some scrapes are
	// mid-run.
	var mid []scrape
	var settled, last scrape
	produced := false
	await.Until(t, 20*time.Millisecond, func() bool {
		s := scrapeMetrics(t, srv.URL()+"/metrics")
		last = s
		in := s.value(t, "eddy_records_in_total")
		if in < n {
			mid = append(mid, s)
		}
		if !produced && in > 0 {
			produce(n/2, n)
			produced = true
		}
		if in == n && s.value(t, "eddy_step_records_in_total", "step", "count") == float64(kept) &&
			s.value(t, "eddy_consumer_lag_records") == 0 {
			settled = s
			return true
		}
		return false
	}, func() string {
		return fmt.Sprintf("metrics never settled: in %v of %d, count step in %v of %d, lag %v", last.value(t, "eddy_records_in_total"), n,
			last.value(t, "eddy_step_records_in_total", "step", "count"), kept, last.value(t, "eddy_consumer_lag_records"))
	})

	// While running: every input partition (the source's and the
	// repartition topic's) has no lag, the windowed stage has watermarks.
	lags := settled.series(t, "eddy_consumer_lag_records")
	if len(lags) != 8 {
		t.Errorf("lag of %d partitions, want 8 (4 of in, 4 of the repartition topic)", len(lags))
	}
	for _, m := range lags {
		if v := m.GetGauge().GetValue(); v != 0 {
			t.Errorf("lag %v: %v", m.GetLabel(), v)
		}
	}
	wms := settled.series(t, "eddy_watermark_seconds", "stage", "1")
	if len(wms) == 0 {
		t.Error("no watermark of the windowed stage")
	}
	for _, m := range wms {
		if v := m.GetGauge().GetValue(); v < 1700000000 || v > 1700000000+n/1000+1 {
			t.Errorf("watermark %v: %v", m.GetLabel(), v)
		}
	}
	if d := settled.value(t, "eddy_watermark_delay_seconds", "stage", "1"); d <= 0 {
		t.Errorf("watermark delay %v", d)
	}
	if in := settled.value(t, "eddy_task_records_in_total", "stage", "0"); in != n {
		t.Errorf("tasks of stage 0 took %v records, want %d", in, n)
	}
	if settled.series(t, "eddy_state_size_bytes", "part", "lsm") == nil {
		t.Error("no state size")
	}

	r.stop(t)
	// A clean stop commits the last transaction; a reader sees the output
	// once nothing of the topics is behind an open transaction (if one is,
	// the wait's failure names its producer).
	testkafka.AwaitSettled(t, b.Brokers(), "out", "dlq")
	final := scrapeMetrics(t, srv.URL()+"/metrics")
	stats := r.node.Stats()
	out := consumeAll(t, b, "out", int(final.value(t, "eddy_records_out_total")), 500*time.Millisecond)
	dlq := consumeAll(t, b, "dlq", failed, 500*time.Millisecond)

	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"eddy_records_in_total", nil, n},
		{"eddy_records_out_total", nil, float64(len(out))},
		{"eddy_records_out_total", nil, float64(stats.Out)},
		{"eddy_dead_letter_records_total", nil, float64(len(dlq))},
		{"eddy_dead_letter_records_total", nil, float64(failed)},
		{"eddy_late_records_total", nil, float64(stats.Late)},
		{"eddy_transaction_aborts_total", nil, 0},
		{"eddy_step_records_in_total", []string{"step", "big"}, n},
		{"eddy_step_dead_letter_records_total", []string{"step", "big"}, float64(failed)},
		{"eddy_step_records_dropped_total", []string{"step", "big"}, float64(dropped)},
		{"eddy_step_records_out_total", []string{"step", "big"}, float64(kept)},
		{"eddy_step_records_in_total", []string{"step", "by-k"}, float64(kept)},
		{"eddy_step_records_out_total", []string{"step", "by-k"}, float64(kept)},
		{"eddy_step_records_in_total", []string{"step", "count"}, float64(kept)},
		{"eddy_step_records_out_total", []string{"step", "count"}, float64(len(out))},
		{"eddy_step_dead_letter_records_total", []string{"step", "count"}, 0},
		// Every source record is in one batch of stage 0.
		{"eddy_batch_records_sum", []string{"stage", "0"}, n},
		{"eddy_commits_total", nil, float64(stats.Commits)},
		{"eddy_transaction_commit_seconds_count", nil, float64(stats.Commits)},
		{"eddy_restores_active", nil, 0},
		{"eddy_restore_remaining_records", nil, 0},
		{"eddy_consumer_lag_records", nil, 0},
	} {
		if got := final.value(t, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if len(out) == 0 || stats.Commits == 0 {
		t.Errorf("%d records out, %d commits", len(out), stats.Commits)
	}
	for _, step := range []string{"big", "by-k", "count"} {
		if c := final.value(t, "eddy_function_call_seconds_count", "step", step); c == 0 {
			t.Errorf("step %s: no function call observed", step)
		}
	}
	if final.value(t, "eddy_restores_total") == 0 {
		t.Error("no restore counted (the windowed stage's stores restore at start)")
	}
	// The Go runtime's and the process's metrics come with the node's,
	// without its labels (host/metrics.go gathers them as one collector).
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		ms := final.series(t, name)
		if len(ms) != 1 || len(ms[0].GetLabel()) != 0 || ms[0].GetGauge().GetValue() <= 0 {
			t.Errorf("%s: %v, want one unlabelled positive gauge", name, ms)
		}
	}

	// A mid-run scrape parses and counts no more than the final one.
	if len(mid) == 0 {
		t.Fatal("no scrape mid-run")
	}
	for i, s := range mid {
		for _, name := range []string{"eddy_records_in_total", "eddy_records_out_total", "eddy_dead_letter_records_total",
			"eddy_step_records_in_total", "eddy_step_records_out_total", "eddy_step_records_dropped_total",
			"eddy_commits_total", "eddy_transaction_commit_seconds_count", "eddy_function_call_seconds_count"} {
			if got, last := s.value(t, name), final.value(t, name); got > last {
				t.Errorf("mid-run scrape %d: %s = %v, above the final %v", i, name, got, last)
			}
		}
	}
	if in := mid[len(mid)-1].value(t, "eddy_records_in_total"); in <= 0 || in >= n {
		t.Errorf("last mid-run scrape counted %v records in", in)
	}
}

// scrape is one parsed /metrics answer.
type scrape map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	return scrapeNode(t, url, "metered", "m1")
}

// scrapeNode parses the /metrics answer at url, checking that every Eddy
// series is labelled with the pipeline and node given.
func scrapeNode(t *testing.T, url, pipeline, node string) scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return parseScrape(t, resp.Body, pipeline, node)
}

// scrapeHandler parses what a node's metrics handler (Node.Metrics)
// answers, checking that every Eddy series is labelled with the pipeline
// and node given.
func scrapeHandler(t *testing.T, h http.Handler, pipeline, node string) scrape {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return parseScrape(t, rec.Body, pipeline, node)
}

// parseScrape parses a /metrics answer, checking that every Eddy series is
// labelled with the pipeline and node given.
func parseScrape(t *testing.T, body io.Reader, pipeline, node string) scrape {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(body)
	if err != nil {
		t.Fatalf("parse the metrics: %v", err)
	}
	for name, f := range fams {
		if !strings.HasPrefix(name, "eddy_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var pl, nd string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "pipeline":
					pl = l.GetValue()
				case "node":
					nd = l.GetValue()
				}
			}
			if pl != pipeline || nd != node {
				t.Fatalf("%s%v: want labels pipeline=%s node=%s", name, m.GetLabel(), pipeline, node)
			}
		}
	}
	return fams
}

// series returns the series of the metric name (a histogram's _count and
// _sum name its family) that have the label pairs given.
func (s scrape) series(t *testing.T, name string, labels ...string) []*dto.Metric {
	t.Helper()
	f := s[name]
	if f == nil {
		return nil
	}
	var out []*dto.Metric
series:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			}
			if !found {
				continue series
			}
		}
		out = append(out, m)
	}
	return out
}

// value sums the metric over the series with the label pairs given: a
// counter's or gauge's value, a histogram's count (name_count) or sum
// (name_sum). A metric absent is 0.
func (s scrape) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	fam, part := name, ""
	for _, suffix := range []string{"_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && s[base] != nil && s[base].GetType() == dto.MetricType_HISTOGRAM {
			fam, part = base, suffix
		}
	}
	var sum float64
	for _, m := range s.series(t, fam, labels...) {
		switch {
		case part == "_count":
			sum += float64(m.GetHistogram().GetSampleCount())
		case part == "_sum":
			sum += m.GetHistogram().GetSampleSum()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		default:
			t.Fatalf("%s: not a counter or gauge", name)
		}
	}
	return sum
}
