package host_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/runtime"
)

// logBuffer is an io.Writer for a test's log, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLoggedNode is startStatefulNode with the node's log kept in logs.
func startLoggedNode(t *testing.T, brokers []string, p *host.Pipeline, id, dir string, logs *logBuffer) *runningNode {
	t.Helper()
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	n, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: brokers, NodeID: id, Engine: eng,
		DataDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	r := &runningNode{node: n, done: make(chan error, 1)}
	r.start(t)
	return r
}

// TestChangelogMismatchRebuildsStore runs the counter twice on one data
// directory, the second time against a changelog that is not the one the
// local checkpoint follows: a fresh broker (the in-memory broker
// restarted), or the changelog topic deleted and created again. The store
// trusted its checkpoint, restored "from offset N, 0 records" and counted on
// from its old state (alice 3, 4 instead of 1, 2), with no warning (issue
// 14, item 2b). It must be rebuilt from the changelog, and the node must say
// so in its log, status and metrics.
func TestChangelogMismatchRebuildsStore(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run("new broker/"+string(d), func(t *testing.T) { testChangelogMismatch(t, d, false) })
	}
	t.Run("changelog recreated/exactly_once", func(t *testing.T) { testChangelogMismatch(t, host.ExactlyOnce, true) })
}

func testChangelogMismatch(t *testing.T, d host.Delivery, recreate bool) {
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: recount
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
`, counter, d))
	alice := []abi.Record{{Key: []byte("alice"), Value: []byte("x")}, {Key: []byte("alice"), Value: []byte("x")}}
	counts := func(b *testkafka.Broker, want int) []string {
		var got []string
		for _, r := range consumeAll(t, b, "out", want, time.Second) {
			got = append(got, string(r.Value))
		}
		return got
	}
	dir := t.TempDir()
	b1 := startBroker(t, "in", "out", "dlq")
	if !recreate {
		b1.Embedded(t, "a broker that restarts empty")
	}
	produceAll(t, []string{b1.Addr()}, "in", alice)
	var logs logBuffer
	n1 := startLoggedNode(t, []string{b1.Addr()}, p, "one", dir, &logs)
	if got := counts(b1, 2); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("first run counted %v, want [1 2]", got)
	}
	n1.stop(t)

	b2, want, reason := b1, []string{"1", "2", "1"}, "changelog_replaced"
	if recreate {
		// Delete the changelog; the node creates it again, empty. The
		// input's offsets stay committed: the next record counts 1.
		cl, err := kgo.NewClient(kgo.SeedBrokers(b1.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kadm.NewClient(cl).DeleteTopics(context.Background(), host.ChangelogTopic("recount", "count")); err != nil {
			t.Fatal(err)
		}
		cl.Close()
		produceAll(t, []string{b1.Addr()}, "in", alice[:1])
	} else {
		// A new, empty broker: the same input again must count 1, 2.
		b1.Embedded(t, "a broker that restarts empty").Close()
		b2 = startBroker(t, "in", "out", "dlq")
		produceAll(t, []string{b2.Addr()}, "in", alice)
		want = []string{"1", "2"}
	}
	logs = logBuffer{}
	n2 := startLoggedNode(t, []string{b2.Addr()}, p, "two", dir, &logs)
	got := counts(b2, len(want))
	st := n2.node.Status()
	rec := httptest.NewRecorder()
	n2.node.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	n2.stop(t)
	if !slices.Equal(got, want) {
		t.Errorf("counted %v, want %v: the store kept the state of another changelog", got, want)
	}
	if !strings.Contains(logs.String(), "store does not match its changelog: rebuilding it from the changelog") ||
		!strings.Contains(logs.String(), "reason="+reason) {
		t.Errorf("no warning with reason %s in the log:\n%s", reason, logs.String())
	}
	if len(st.StateRebuilds) != 1 || st.StateRebuilds[0].Reason != reason ||
		st.StateRebuilds[0].Changelog != "recount-count-changelog" || st.StateRebuilds[0].Checkpoint <= 0 {
		t.Errorf("status state_rebuilds %+v, want one of recount-count-changelog for %s", st.StateRebuilds, reason)
	}
	metric := regexp.MustCompile(`eddy_state_rebuilds_total\{[^}]*reason="` + reason + `"[^}]*\} 1\n`)
	if !metric.MatchString(rec.Body.String()) {
		t.Errorf("metrics have no eddy_state_rebuilds_total{reason=%q} 1:\n%s", reason, grepLines(rec.Body.String(), "eddy_state_rebuilds"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
