package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// tableVersions are versions 1..v of keys k0..k9, version j of every key at
// time base+10j: the table topic of the stream-table join tests.
func tableVersions(base int64, v int) []abi.Record {
	var recs []abi.Record
	for j := 1; j <= v; j++ {
		for k := 0; k < 10; k++ {
			recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(fmt.Sprintf(`{"v":%d}`, j)),
				Timestamp: base + int64(j)*10})
		}
	}
	return recs
}

// joinedVersion returns the table version in a left join's output, 0 for
// none.
func joinedVersion(t *testing.T, r abi.Record) (order, version int) {
	t.Helper()
	var v struct {
		Left  struct{ Order int }
		Right *struct{ V int }
	}
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("output %s: %v", r.Value, err)
	}
	if v.Right != nil {
		version = v.Right.V
	}
	return v.Left.Order, version
}

func tableJoinPipeline(t *testing.T, delivery string) *host.Pipeline {
	return loadPipeline(t, fmt.Sprintf(`name: tsync
source: {topics: [orders]}
tables: [{name: versions, topic: versions}]
steps:
  - {name: enrich, kind: join, table: versions, type: left}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
batch_size: 100
`, delivery))
}

// TestTableJoinReadsTableOnce is the reproduction of a table read twice: a
// table topic holding versions 1..V of each key is written and flushed,
// then a stream over the same keys, then one node starts in a new group.
// Every stream record must meet the final version: the table's partition is
// not read again over the store restored from it, and no stream record
// joins before the table updates older than it are applied.
func TestTableJoinReadsTableOnce(t *testing.T) {
	for _, delivery := range []string{"exactly_once", "at_least_once"} {
		t.Run(delivery, func(t *testing.T) {
			b := startBroker(t, "orders", "versions", "out", "dlq")
			brokers := []string{b.Addr()}
			const base, versions, orders = int64(1700000000000), 500, 5000
			produceAll(t, brokers, "versions", tableVersions(base, versions))
			var stream []abi.Record
			for i := 0; i < orders; i++ {
				stream = append(stream, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i)),
					Timestamp: base + versions*10 + 1 + int64(i)})
			}
			produceAll(t, brokers, "orders", stream)
			// A first node of the group, on a data directory that the
			// second node reuses: its store has the whole table.
			data := t.TempDir()
			p := tableJoinPipeline(t, delivery)
			n := newStatefulNode(t, brokers, p, "one", data)
			n.start(t)
			out := consumeAll(t, b, "out", orders, time.Second)
			n.stop(t)
			check := func(out []abi.Record, want int) {
				t.Helper()
				seen := map[int]bool{}
				for _, r := range out {
					order, v := joinedVersion(t, r)
					if v != versions {
						t.Fatalf("order %d of %s met version %d, want %d (the final one)", order, r.Key, v, versions)
					}
					seen[order] = true
				}
				if len(seen) != want || delivery == "exactly_once" && len(out) != want {
					t.Fatalf("%d outputs, %d distinct orders, want %d", len(out), len(seen), want)
				}
			}
			check(out, orders)
			// A restarted node restores the table from its checkpoint and
			// consumes the table from there, never from an older offset.
			more := make([]abi.Record, 0, orders)
			for i := orders; i < 2*orders; i++ {
				more = append(more, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i)),
					Timestamp: base + versions*10 + 1 + int64(i)})
			}
			produceAll(t, brokers, "orders", more)
			n = newStatefulNode(t, brokers, p, "one", data)
			n.start(t)
			out = consumeAll(t, b, "out", 2*orders, time.Second)
			n.stop(t)
			check(out, 2*orders)
		})
	}
}

// TestTableJoinMeetsTableAtItsTime: the table's versions and the stream's
// records interleave in time (record i at a time between two versions), so
// each stream record must meet the version current at its timestamp, not
// the table as far as it was read. Then the group's offsets are deleted
// and the node restarts on its data directory: its table store, holding
// the last version, is ahead of the group (which starts over) and must be
// rebuilt (state_rebuilds: ahead_of_group), so that the records processed
// again meet the table at their time again. Last, eddy reset: the same once
// more.
func TestTableJoinMeetsTableAtItsTime(t *testing.T) {
	for _, delivery := range []string{"exactly_once", "at_least_once"} {
		t.Run(delivery, func(t *testing.T) {
			b := startBroker(t, "orders", "versions", "out", "dlq")
			brokers := []string{b.Addr()}
			const base, versions, orders = int64(1700000000000), 400, 4000
			// Order i is at a time just after version i*versions/orders+1.
			// Key k10 enters the table only with the last version.
			at := func(i int) int { return i*versions/orders + 1 }
			want := func(i int) int {
				if i%11 == 10 && at(i) < versions {
					return 0
				}
				return at(i)
			}
			var stream []abi.Record
			for i := 0; i < orders; i++ {
				stream = append(stream, abi.Record{Key: []byte(fmt.Sprintf("k%d", i%11)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i)),
					Timestamp: base + int64(at(i))*10 + 5})
			}
			// The stream is written first: arrival order says nothing.
			produceAll(t, brokers, "orders", stream)
			table := append(tableVersions(base, versions), abi.Record{Key: []byte("k10"), Value: []byte(fmt.Sprintf(`{"v":%d}`, versions)),
				Timestamp: base + versions*10})
			produceAll(t, brokers, "versions", table)
			data := t.TempDir()
			p := tableJoinPipeline(t, delivery)
			check := func(out []abi.Record, copies int) {
				t.Helper()
				seen := map[int]int{}
				for _, r := range out {
					order, v := joinedVersion(t, r)
					if v != want(order) {
						t.Fatalf("order %d of %s (t=%d) met version %d, want %d (0: none)", order, r.Key, r.Timestamp, v, want(order))
					}
					seen[order]++
				}
				for i := 0; i < orders; i++ {
					if seen[i] < copies || delivery == "exactly_once" && seen[i] != copies {
						t.Fatalf("order %d came out %d times, want %d", i, seen[i], copies)
					}
				}
			}
			n := newStatefulNode(t, brokers, p, "one", data)
			n.start(t)
			check(consumeAll(t, b, "out", orders, time.Second), 1)
			n.stop(t)

			cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if _, err := kadm.NewClient(cl).DeleteGroup(context.Background(), "tsync"); err != nil {
				t.Fatal(err)
			}
			n = newStatefulNode(t, brokers, p, "one", data)
			n.start(t)
			check(consumeAll(t, b, "out", 2*orders, time.Second), 2)
			st := n.node.Status()
			rebuilt := 0
			for _, r := range st.StateRebuilds {
				if r.Reason == "ahead_of_group" {
					rebuilt++
				}
			}
			n.stop(t)
			if rebuilt == 0 {
				t.Fatalf("no table store was rebuilt as ahead of its group: %+v", st.StateRebuilds)
			}

			// eddy reset --to earliest --truncate-output: the table is read
			// again from its start with the stream, which meets it at its
			// time once more.
			plan, err := host.Reset(context.Background(), p, host.ResetOptions{Brokers: brokers, TruncateOutput: true, Force: true,
				Wait: 30 * time.Second, RegistryKey: testRegistryKey})
			if err != nil {
				t.Fatal(err)
			}
			for _, mv := range plan.Offsets {
				if mv.Topic == "versions" && mv.To != 0 {
					t.Fatalf("reset moves the table's partition %d to %d, want its start", mv.Partition, mv.To)
				}
			}
			n = newStatefulNode(t, brokers, p, "one", data)
			n.start(t)
			check(consumeAll(t, b, "out", orders, time.Second), 1)
			n.stop(t)
		})
	}
}

// TestTableJoinPartialPolls: table updates and stream records that arrive
// together while the node runs, more of them than one poll takes (batch_size
// 5: a poll takes 10 records of the two partitions). On the embedded broker
// each round is one transaction, so that one fetch brings both topics'
// records at once; the client then hands them over in several polls, one
// partition's records before the other's. A stream record must still meet
// the table at its own time, whichever partition the client hands over
// first: the queue of the partition not yet handed over was read to its end
// as of the last poll, but the client holds more of it. Apache Kafka does
// not make a transaction visible in all its partitions at once (it writes
// the commit markers one partition after the other, and a fetch between
// two shows part of it), so there a round is written in time order, each
// part acknowledged before the next, and its records may or may not come
// in one fetch.
func TestTableJoinPartialPolls(t *testing.T) {
	b := startBroker(t, "orders", "versions", "out", "dlq")
	brokers := []string{b.Addr()}
	const base, rounds, keys, each = int64(1700000000000), 8, 10, 60
	p := loadPipeline(t, `name: tpoll
source: {topics: [orders]}
tables: [{name: versions, topic: versions}]
steps:
  - {name: enrich, kind: join, table: versions, type: left}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 5
`)
	// Version r of every key is at base + 1000r; round r writes it with
	// the orders of the second before it (which meet version r-1) and of
	// the second after it (which meet version r).
	at := func(r int) int64 { return base + int64(r)*1000 }
	var v0 []abi.Record
	for k := range keys {
		v0 = append(v0, abi.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(`{"v":0}`), Timestamp: base})
	}
	produceAll(t, brokers, "versions", v0)
	n := newStatefulNode(t, brokers, p, "one", t.TempDir())
	n.start(t)
	defer n.stop(t)

	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ProducerLinger(0)}
	if !testkafka.Real() {
		opts = append(opts, kgo.TransactionalID("tpoll-test"))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[int]int{} // order → the version current at its time
	order := 0
	orders := func(from int64, version int) []*kgo.Record {
		var rs []*kgo.Record
		for i := range each {
			ts := from + int64(i)*900/each
			rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("k%d", order%keys)),
				Value: []byte(fmt.Sprintf(`{"order":%d}`, order)), Timestamp: time.UnixMilli(ts)})
			want[order] = version
			order++
		}
		return rs
	}
	// The first order of round 1 waits for nothing but the node's start:
	// round 0's orders give the node time to read the table to its end.
	produce := func(rs []*kgo.Record) {
		t.Helper()
		if testkafka.Real() {
			for len(rs) > 0 { // each run of one topic, in order
				k := 1
				for k < len(rs) && rs[k].Topic == rs[0].Topic {
					k++
				}
				if err := cl.ProduceSync(context.Background(), rs[:k]...).FirstErr(); err != nil {
					t.Fatal(err)
				}
				rs = rs[k:]
			}
			return
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(context.Background(), kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	produce(orders(at(0)+50, 0))
	consumeAll(t, b, "out", each, 100*time.Millisecond)
	for r := 1; r <= rounds; r++ {
		rs := orders(at(r)-950, r-1)
		for k := range keys {
			rs = append(rs, &kgo.Record{Topic: "versions", Key: []byte(fmt.Sprintf("k%d", k)),
				Value: []byte(fmt.Sprintf(`{"v":%d}`, r)), Timestamp: time.UnixMilli(at(r))})
		}
		rs = append(rs, orders(at(r)+50, r)...)
		produce(rs)
		// The node takes each round before the next is written, with the
		// table read to its end.
		consumeAll(t, b, "out", order, 100*time.Millisecond)
	}
	out := consumeAll(t, b, "out", order, time.Second)
	seen := map[int]int{}
	bad := 0
	for _, r := range out {
		o, v := joinedVersion(t, r)
		seen[o]++
		if v != want[o] {
			bad++
			if bad <= 3 {
				t.Errorf("order %d of %s (t=%d) met version %d, want %d", o, r.Key, r.Timestamp, v, want[o])
			}
		}
	}
	if len(seen) != order || len(out) != order || bad > 0 {
		t.Fatalf("%d outputs, %d distinct orders of %d, %d joined with a version not current at their time", len(out), len(seen), order, bad)
	}
}
