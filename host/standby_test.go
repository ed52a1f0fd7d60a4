package host_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/state"
)

// TestStandbyCopies runs the counter guest with standby_replicas: 1 under
// exactly_once on two nodes. Each of the four changelog partitions holds
// 12,000 records, more than the warm-up bound (10,000), so when the second
// node joins it first warms copies of the partitions it is to take while
// the first keeps processing them all; once its copies have caught up it
// asks for a rebalance and takes them, restoring only what its copies
// lack. Then each node keeps a standby copy of the other's partitions;
// when the first stops, the second takes its partitions over restoring a
// tail, not the changelogs, and the counts go on.
func TestStandbyCopies(t *testing.T) {
	const filler = 12_000
	b, p, _, cl := standingCounter(t, "standing", filler)
	brokers := b.Brokers()
	ctx := context.Background()
	sent := [4]int{}
	produce := func() {
		t.Helper()
		var rs []*kgo.Record
		for part := range int32(4) {
			sent[part]++
			rs = append(rs, &kgo.Record{Topic: "in", Partition: part, Key: fmt.Appendf(nil, "key-%d", part), Value: []byte("x")})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// counted waits until every key's last count is 1000 + what was sent.
	counted := func() {
		t.Helper()
		var last map[string]int
		await.Until(t, 50*time.Millisecond, func() bool {
			last = map[string]int{}
			for _, r := range consumeAll(t, b, "out", 0, 200*time.Millisecond) {
				last[string(r.Key)], _ = strconv.Atoi(string(r.Value))
			}
			for part := range 4 {
				if last[fmt.Sprintf("key-%d", part)] != 1000+sent[part] {
					return false
				}
			}
			return true
		}, func() string { return fmt.Sprintf("counts %v, want 1000 + %v", last, sent) })
	}
	restored := func(r *runningNode) float64 {
		srv := httptest.NewServer(r.node.Metrics())
		defer srv.Close()
		return scrapeNode(t, srv.URL, "standing", r.node.Status().Node).value(t, "eddy_restore_records_total")
	}
	held := func(r *runningNode) []int32 { return slices.Sorted(slices.Values(r.node.Status().Partitions["in"])) }

	a := startStatefulNode(t, brokers, p, "a", t.TempDir())
	await.Until(t, 20*time.Millisecond, func() bool { return len(held(a)) == 4 && len(a.node.Status().Restores) == 0 },
		func() string { return fmt.Sprintf("node a holds %v", held(a)) })
	produce()
	counted()

	// The second node warms copies first: a holds every partition while b
	// shows warm-up copies.
	bn := startStatefulNode(t, brokers, p, "b", t.TempDir())
	// The two nodes' statuses are read one after the other, not at one
	// instant: a's is read first, so a warm-up that b shows while holding
	// nothing began no later than a's reading. Once b's copies catch up
	// the partitions move between the two readings, which is what the
	// test wants to see next, not a failure.
	sawWarmup := false
	await.Until(t, 20*time.Millisecond, func() bool {
		aHeld := held(a)
		st := bn.node.Status()
		if len(st.Partitions["in"]) == 0 && len(aHeld) == 4 {
			for _, s := range st.Standbys {
				sawWarmup = sawWarmup || s.Warmup
			}
		}
		return len(st.Partitions["in"]) == 2 && len(held(a)) == 2
	}, func() string {
		return fmt.Sprintf("a holds %v, b holds %v; b's copies %+v", held(a), held(bn), bn.node.Status().Standbys)
	})
	if !sawWarmup {
		t.Error("node b took partitions without warming copies of them first while a held all four")
	}
	if got := restored(bn); got >= 2*filler {
		t.Errorf("node b restored %v records to take its two partitions, want fewer than their changelogs' %d (its warm copies had them)", got, 2*filler)
	}

	// Each node keeps a caught-up copy of the other's partitions, never
	// of its own.
	copies := func(r *runningNode) (parts []int32, lag int64) {
		for _, s := range r.node.Status().Standbys {
			if !slices.Contains(parts, s.Partition) {
				parts = append(parts, s.Partition)
			}
			lag += s.Lag
		}
		slices.Sort(parts)
		return parts, lag
	}
	produce()
	counted()
	await.Until(t, 20*time.Millisecond, func() bool {
		ac, alag := copies(a)
		bc, blag := copies(bn)
		return slices.Equal(ac, held(bn)) && slices.Equal(bc, held(a)) && alag == 0 && blag == 0
	}, func() string {
		ac, alag := copies(a)
		bc, blag := copies(bn)
		return fmt.Sprintf("a holds %v and copies %v (lag %d); b holds %v and copies %v (lag %d)", held(a), ac, alag, held(bn), bc, blag)
	})

	// The first node stops: the second takes its partitions over from its
	// copies, restoring the tail.
	before := restored(bn)
	a.stop(t)
	await.Until(t, 20*time.Millisecond, func() bool { return len(held(bn)) == 4 && len(bn.node.Status().Restores) == 0 },
		func() string { return fmt.Sprintf("b holds %v", held(bn)) })
	if d := restored(bn) - before; d >= filler {
		t.Errorf("node b restored %v records taking a's two partitions over, want a tail, far fewer than their changelogs' %d", d, 2*filler)
	}
	if parts, _ := copies(bn); len(parts) != 0 {
		t.Errorf("node b alone keeps copies of %v", parts)
	}
	produce()
	counted()
}

// standingCounter starts a broker with topics in, out and dlq and returns
// a pipeline named name that counts per key (the counter guest, keyed
// state) under exactly_once with standby_replicas: 1, its changelog (four
// partitions, each filled with fillers records and key-<p> at 1000:
// fillChangelog) and a client that writes to the partitions records name.
func standingCounter(t *testing.T, name string, fillers int) (*testkafka.Broker, *host.Pipeline, string, *kgo.Client) {
	t.Helper()
	b := testkafka.Start(t, "in", "out", "dlq")
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: %s
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
standby_replicas: 1
`, name, counter))
	changelog := host.ChangelogTopic(name, "count")
	if err := host.CreateCompactedTopics(context.Background(), b.Brokers(), 4, changelog); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Brokers()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	fillChangelog(t, cl, changelog, []int32{0, 1, 2, 3}, fillers, func(p int32) string { return fmt.Sprintf("key-%d", p) })
	return b, p, changelog, cl
}

// fillChangelog writes, to each partition of changelog in parts, fillers
// records (keys filler-NNNNNN, value 7) and then the key last gives it,
// with the count 1000: state the counter guest goes on from once
// restored. cl must partition records as they name (ManualPartitioner).
func fillChangelog(t *testing.T, cl *kgo.Client, changelog string, parts []int32, fillers int, last func(int32) string) {
	t.Helper()
	var recs []*kgo.Record
	for _, part := range parts {
		for i := range fillers {
			recs = append(recs, &kgo.Record{Topic: changelog, Partition: part, Key: fmt.Appendf(nil, "filler-%06d", i), Value: []byte("7")})
		}
		recs = append(recs, &kgo.Record{Topic: changelog, Partition: part, Key: []byte(last(part)), Value: []byte("1000")})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestStandbyCopyRebuilt damages the checkpoints of every store of a
// stopped node's data directory (a checkpoint that does not decode, as a
// damaged directory has) and starts it again: with two nodes and
// standby_replicas: 1 it keeps standby copies of the other's partitions,
// and those copies are wiped and rebuilt from their changelogs, reported
// in its status (state_rebuilds, checkpoint_corrupt) and metrics; the
// counts go on.
func TestStandbyCopyRebuilt(t *testing.T) {
	b, p, changelog, cl := standingCounter(t, "rebuilt", 500)
	brokers := b.Brokers()
	ctx := context.Background()
	held := func(r *runningNode) []int32 { return slices.Sorted(slices.Values(r.node.Status().Partitions["in"])) }
	copied := func(r *runningNode) (parts []int32, lag int64) {
		for _, s := range r.node.Status().Standbys {
			if s.Changelog == changelog {
				parts = append(parts, s.Partition)
				lag += s.Lag
			}
		}
		slices.Sort(parts)
		return parts, lag
	}
	// Each of two nodes holds two partitions and copies the other's two.
	settled := func(x, y *runningNode) {
		t.Helper()
		await.Until(t, 20*time.Millisecond, func() bool {
			xc, xlag := copied(x)
			yc, ylag := copied(y)
			return len(held(x)) == 2 && slices.Equal(xc, held(y)) && slices.Equal(yc, held(x)) && xlag == 0 && ylag == 0
		}, func() string {
			xc, xlag := copied(x)
			yc, ylag := copied(y)
			return fmt.Sprintf("x holds %v and copies %v (lag %d); y holds %v and copies %v (lag %d)", held(x), xc, xlag, held(y), yc, ylag)
		})
	}
	a := startStatefulNode(t, brokers, p, "a", t.TempDir())
	dir := t.TempDir()
	bn := startStatefulNode(t, brokers, p, "b", dir)
	settled(a, bn)
	bn.stop(t)

	db, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var damaged []int32
	for part := range int32(4) {
		st := db.Store("rebuilt", "count", part)
		if cp, err := st.Checkpoint(); err != nil || cp < 0 {
			continue
		}
		if err := st.Restore(nil, -1); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Checkpoint(); err == nil {
			t.Fatalf("partition %d: the damaged checkpoint decodes", part)
		}
		damaged = append(damaged, part)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if len(damaged) != 4 {
		t.Fatalf("damaged the checkpoints of partitions %v, want all four (b held two and copied two)", damaged)
	}

	bn = startStatefulNode(t, brokers, p, "b", dir)
	settled(a, bn)
	standbys, _ := copied(bn)
	var rebuiltCopies []int32
	for _, r := range bn.node.Status().StateRebuilds {
		if r.Changelog == changelog && r.Reason == "checkpoint_corrupt" && slices.Contains(standbys, r.Partition) {
			rebuiltCopies = append(rebuiltCopies, r.Partition)
		}
	}
	slices.Sort(rebuiltCopies)
	if !slices.Equal(rebuiltCopies, standbys) {
		t.Errorf("b keeps standby copies of %v and reports rebuilding %v of them (checkpoint_corrupt); its rebuilds: %+v",
			standbys, rebuiltCopies, bn.node.Status().StateRebuilds)
	}
	srv := httptest.NewServer(bn.node.Metrics())
	defer srv.Close()
	if got := scrapeNode(t, srv.URL, "rebuilt", "b").value(t, "eddy_state_rebuilds_total", "reason", "checkpoint_corrupt"); got < 2 {
		t.Errorf("b counts %v rebuilds for checkpoint_corrupt, want at least its two copies", got)
	}
	// The counts go on from the changelog's 1000.
	var rs []*kgo.Record
	for part := range int32(4) {
		rs = append(rs, &kgo.Record{Topic: "in", Partition: part, Key: fmt.Appendf(nil, "key-%d", part), Value: []byte("x")})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	await.Until(t, 50*time.Millisecond, func() bool {
		last := map[string]string{}
		for _, r := range consumeAll(t, b, "out", 0, 200*time.Millisecond) {
			last[string(r.Key)] = string(r.Value)
		}
		for part := range 4 {
			if last[fmt.Sprintf("key-%d", part)] != "1001" {
				return false
			}
		}
		return true
	}, func() string { return "the counts did not go on from 1000" })
}
