package host_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/runtime"
)

// TestStatusWhileRestoring: a stateful step's changelog holds 300,000
// records over its partitions, and a node with an empty data directory
// restores them when it is assigned the partitions. Its status must answer while the restore goes on
// and show it (topic, partition, records read and left): a restore holds no
// lock that status needs. Before, the node restored inside its partition
// assignment, under the lock that status takes, and status answered only
// once the restore was over.
func TestStatusWhileRestoring(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq")
	p := loadPipeline(t, `name: restoring
source: {topics: [in]}
steps:
  - {name: keep, kind: map, function: "native:pass", state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`)
	const records = 300_000
	changelog := host.ChangelogTopic("restoring", "keep")
	var recs []abi.Record
	for i := range records {
		recs = append(recs, abi.Record{Key: []byte(fmt.Sprintf("k%07d", i)), Value: []byte("v")})
	}
	produceAll(t, []string{b.Addr()}, changelog, recs)
	pass := func() runtime.Native {
		return runtime.Native{ProcessState: func(_ runtime.State, rec *abi.Record, emit func(abi.Record)) error { emit(*rec); return nil }}
	}
	n := startNativeNode(t, b, p, map[string]func() runtime.Native{"pass": pass})
	var seen []host.RestoreStatus
	for {
		st := n.node.Status()
		if len(st.Restores) > 0 {
			seen = st.Restores
			break
		}
		if len(st.Partitions["in"]) > 0 {
			t.Fatalf("the node holds its partition and status never showed its store's restore (%d records)", records)
		}
		if err := nodeErr(n); err != nil {
			t.Fatalf("node stopped: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	r := seen[0]
	// The changelog's records are spread over its partitions (the
	// broker's default count), restored side by side.
	if r.Topic != changelog || r.Partition < 0 || r.Restored+r.Remaining > records || r.Remaining <= 0 {
		t.Fatalf("restore in status: %+v, want one of %s with at most %d records in all", r, changelog, records)
	}
	// The restores end, and status says so.
	await.Until(t, 10*time.Millisecond, func() bool { return len(n.node.Status().Restores) == 0 },
		func() string { return fmt.Sprintf("restores still shown: %+v", n.node.Status().Restores) })
	produceAll(t, []string{b.Addr()}, "in", []abi.Record{{Key: []byte("k"), Value: []byte("x")}})
	consumeAll(t, b, "out", 1, 100*time.Millisecond)
}
