package host_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestRestoreDoesNotStopTheNode gives a node two partitions of a stateful
// step under exactly_once: partition 0's changelog holds 20,000 records
// (one of them the count of the key its input uses), partition 1's is
// empty. The broker holds the restore's fetches of changelog partition 0
// until the test lets them go. Meanwhile the node must process partition
// 1 (its outputs readable, committed), answer status and /metrics (their
// answer times are reported, not asserted), and show the restore under way
// in both; once the restore is let go (after more than the restore's first
// poll waits), partition 0's counts go on from the restored one.
func TestRestoreDoesNotStopTheNode(t *testing.T) {
	b := testkafka.StartPartitions(t, 2, "in", "out", "dlq")
	cluster := b.Embedded(t, "holds a restore's fetches").Cluster()
	brokers := b.Brokers()
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: slowrestore
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, counter))
	ctx := context.Background()
	changelog := host.ChangelogTopic("slowrestore", "count")
	if err := host.CreateCompactedTopics(ctx, brokers, 2, changelog); err != nil {
		t.Fatal(err)
	}
	const prefill = 20_000
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fillChangelog(t, cl, changelog, []int32{0}, prefill-1, func(int32) string { return "zero" })
	tds, err := kadm.NewClient(cl).ListTopics(ctx, changelog)
	if err != nil {
		t.Fatal(err)
	}
	id := tds[changelog].ID

	// Hold the first fetch of changelog partition 0 (the restore's) until
	// release is closed.
	release := make(chan struct{})
	var holdOnce sync.Once
	held := make(chan time.Time, 1)
	cluster.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		for _, tp := range req.(*kmsg.FetchRequest).Topics {
			if (tp.Topic == changelog || tp.TopicID == id) && slices.ContainsFunc(tp.Partitions, func(p kmsg.FetchRequestTopicPartition) bool { return p.Partition == 0 }) {
				holdOnce.Do(func() { held <- time.Now(); cluster.SleepControl(func() { <-release }) })
			}
		}
		return nil, nil, false
	})
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo)

	produce := func(part int32, key string, n int) {
		t.Helper()
		var rs []*kgo.Record
		for range n {
			rs = append(rs, &kgo.Record{Topic: "in", Partition: part, Key: []byte(key), Value: []byte("x")})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, "zero", 5)
	produce(1, "one", 5)

	r := startStatefulNode(t, brokers, p, "r1", t.TempDir())
	srvCtx, cancel := context.WithCancel(ctx)
	srv, err := admin.NewServer(r.node.Admin(), admin.Config{Addr: "127.0.0.1:0",
		Pages: map[string]http.Handler{"/metrics": r.node.Metrics()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(srvCtx); err != nil {
		t.Fatal(err)
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Run(srvCtx) }()
	t.Cleanup(func() { cancel(); <-srvDone })

	// Partition 1 is processed while partition 0 restores.
	counts := func() map[string][]int {
		m := map[string][]int{}
		for _, rec := range consumeAll(t, b, "out", 0, 300*time.Millisecond) {
			c, _ := strconv.Atoi(string(rec.Value))
			m[string(rec.Key)] = append(m[string(rec.Key)], c)
		}
		return m
	}
	var got map[string][]int
	await.Until(t, 50*time.Millisecond, func() bool { got = counts(); return len(got["one"]) == 5 },
		func() string { return fmt.Sprintf("partition 1 was not processed while partition 0 restores: %v", got) })
	if len(got["zero"]) != 0 {
		t.Fatalf("partition 0 produced %v before its restore was let go", got["zero"])
	}
	if !slices.Equal(got["one"], []int{1, 2, 3, 4, 5}) {
		t.Errorf("partition 1 counted %v, want 1..5", got["one"])
	}

	// Status and metrics answer, and show the restore.
	var slowest time.Duration
	for range 20 {
		began := time.Now()
		st := r.node.Status()
		resp, err := http.Get(srv.URL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		slowest = max(slowest, time.Since(began))
		if i := slices.IndexFunc(st.Restores, func(rs host.RestoreStatus) bool { return rs.Topic == changelog && rs.Partition == 0 }); i < 0 {
			t.Fatalf("status shows no restore of %s[0]: %+v", changelog, st.Restores)
		} else if st.Restores[i].Remaining != prefill {
			t.Errorf("status: %d records left to restore, want %d", st.Restores[i].Remaining, prefill)
		}
	}
	m := scrapeNode(t, srv.URL()+"/metrics", "slowrestore", "r1")
	if v := m.value(t, "eddy_restores_active"); v != 1 {
		t.Errorf("eddy_restores_active = %v during the restore, want 1", v)
	}
	t.Logf("during the restore: status and /metrics answered within %v (slowest of 20)", slowest)

	// The fetch is held past the restore's first poll (5 s): a restore
	// must not take a poll that found nothing, while the broker has not
	// answered, for the end of its changelog (it once did, and went on
	// with an empty store).
	time.Sleep(time.Until((<-held).Add(6 * time.Second)))
	letGo()
	produce(0, "zero", 2)
	await.Until(t, 50*time.Millisecond, func() bool { got = counts(); return len(got["zero"]) == 7 },
		func() string { return fmt.Sprintf("partition 0 after its restore: %v", got) })
	if want := []int{1001, 1002, 1003, 1004, 1005, 1006, 1007}; !slices.Equal(got["zero"], want) {
		t.Errorf("partition 0 counted %v, want %v (on from the restored 1000)", got["zero"], want)
	}
	if v := scrapeNode(t, srv.URL()+"/metrics", "slowrestore", "r1").value(t, "eddy_restores_active"); v != 0 {
		t.Errorf("eddy_restores_active = %v after the restore", v)
	}
}
