package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/registry"
)

// resetBroker gives the test its broker (testkafka) with 4-partition topics and writes
// 100 records to "in", one a second of record time from base, keyed k0..k9.
func resetBroker(t *testing.T, base int64, topics ...string) (*testkafka.Broker, *kadm.Client) {
	t.Helper()
	b := testkafka.StartPartitions(t, 4, append([]string{"in"}, topics...)...)
	i := 0
	if _, err := host.Produce(context.Background(), []string{b.Addr()}, "in", func() (abi.Record, error) {
		if i == 100 {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte(fmt.Sprintf("k%d", i%10)), Value: []byte(fmt.Sprintf(`{"user":"u%d"}`, i%3)),
			Timestamp: base + int64(i-1)*1000}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return b, kadm.NewClient(cl)
}

func writePipeline(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// commitAtEnd commits the group's offsets of topics at their end, as a
// pipeline that processed everything would have.
func commitAtEnd(t *testing.T, adm *kadm.Client, group string, topics ...string) {
	t.Helper()
	ends, err := adm.ListEndOffsets(context.Background(), topics...)
	if err != nil {
		t.Fatal(err)
	}
	var offs kadm.Offsets
	ends.Each(func(o kadm.ListedOffset) {
		offs.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
	})
	if err := adm.CommitAllOffsets(context.Background(), group, offs); err != nil {
		t.Fatal(err)
	}
}

// clusterState is what a reset may change: topics (with their IDs), their
// start and end offsets, and a group's committed offsets. It reads with a
// new client each time (kadm caches metadata).
func clusterState(t *testing.T, brokers []string, group string) string {
	t.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, d := range topics.Sorted() {
		lines = append(lines, fmt.Sprintf("topic %s %s %d", d.Topic, d.ID, len(d.Partitions)))
	}
	starts, err := adm.ListStartOffsets(ctx, topics.Names()...)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics.Names()...)
	if err != nil {
		t.Fatal(err)
	}
	starts.Each(func(o kadm.ListedOffset) {
		lines = append(lines, fmt.Sprintf("start %s[%d] %d", o.Topic, o.Partition, o.Offset))
	})
	ends.Each(func(o kadm.ListedOffset) {
		lines = append(lines, fmt.Sprintf("end %s[%d] %d", o.Topic, o.Partition, o.Offset))
	})
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	committed.Each(func(o kadm.OffsetResponse) {
		lines = append(lines, fmt.Sprintf("committed %s[%d] %d", o.Topic, o.Partition, o.At))
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestResetDryRun: eddy reset --dry-run prints the plan, every partition's
// offset move and every truncation with the offsets as they are, and
// changes nothing: no topic, offset or committed offset moves, and the
// registry topic is not even created.
func TestResetDryRun(t *testing.T) {
	b, adm := resetBroker(t, 1700000000000, "out", "dlq", "late")
	brokers := []string{b.Addr()}
	counter, _ := filepath.Abs(td("go/counter.wasm"))
	pipe := writePipeline(t, fmt.Sprintf(`name: dry
source: {topics: [in]}
steps:
  - {name: by-user, kind: key_by, field: user}
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
`, counter))
	// The state a run leaves: a changelog, a repartition topic, output,
	// committed offsets.
	ctx := context.Background()
	if err := host.CreateCompactedTopics(ctx, brokers, 4, host.ChangelogTopic("dry", "count")); err != nil {
		t.Fatal(err)
	}
	if err := host.CreateTopics(ctx, brokers, 4, host.RepartitionTopic("dry", "by-user")); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{host.ChangelogTopic("dry", "count"), host.RepartitionTopic("dry", "by-user"), "out"} {
		n := 0
		if _, err := host.Produce(ctx, brokers, topic, func() (abi.Record, error) {
			if n == 12 {
				return abi.Record{}, io.EOF
			}
			n++
			return abi.Record{Key: []byte(fmt.Sprintf("u%d", n)), Value: []byte("1")}, nil
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	commitAtEnd(t, adm, "dry", "in", host.RepartitionTopic("dry", "by-user"))
	before := clusterState(t, brokers, "dry")

	stdout, stderr, code := run(t, "", "reset", "--pipeline", pipe, "--to", "earliest", "--truncate-output", "--dry-run", "--brokers", b.Addr())
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if after := clusterState(t, brokers, "dry"); after != before {
		t.Fatalf("a dry run changed the cluster:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if ts, _ := adm.ListTopics(ctx, registry.DefaultTopic); ts[registry.DefaultTopic].Err == nil {
		t.Fatal("a dry run created the registry topic")
	}

	// Every line of the plan, from the offsets as they are.
	ends, _ := adm.ListEndOffsets(ctx, "in", host.RepartitionTopic("dry", "by-user"), "out")
	want := []string{
		"dry run: nothing was changed; the reset would do this:",
		"reset pipeline dry (consumer group dry) to earliest (the first records of the source topics)",
		"group dry: no members",
		"registry eddy-registry: reset 1 of pipeline dry: nodes stop, and wait until it is done (reset_done 2); when they next start they wipe their local stores: count, count#timers",
		"recreate dry-count-changelog: delete the topic and create it again empty: 4 partitions, replication factor 1, configs cleanup.policy=compact",
	}
	for part := int32(0); part < 4; part++ {
		o, _ := ends.Lookup("in", part)
		want = append(want, fmt.Sprintf("offset in[%d]: %d -> 0 (source topic, earliest)", part, o.Offset))
	}
	for part := int32(0); part < 4; part++ {
		o, _ := ends.Lookup(host.RepartitionTopic("dry", "by-user"), part)
		want = append(want, fmt.Sprintf("offset dry-by-user-repartition[%d]: %d -> %d (repartition topic: its end, its old records are not processed again)",
			part, o.Offset, o.Offset))
	}
	for part := int32(0); part < 4; part++ {
		if o, _ := ends.Lookup("out", part); o.Offset > 0 {
			want = append(want, fmt.Sprintf("truncate out[%d]: delete offsets 0 to %d (%d records; sink)", part, o.Offset-1, o.Offset))
		}
	}
	want = append(want, "keep dlq: dead-letter topic (--truncate-dead-letters to delete its records)")
	if got := strings.Split(strings.TrimSpace(stdout), "\n"); !reflect.DeepEqual(got, want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", stdout, strings.Join(want, "\n"))
	}

	// A compacted sink cannot be truncated: said before anything changes.
	if err := host.CreateCompactedTopics(ctx, brokers, 4, "table-out"); err != nil {
		t.Fatal(err)
	}
	compacted := writePipeline(t, strings.Replace(mustRead(t, pipe), "sink: {topic: out}", "sink: {topic: table-out}", 1))
	before = clusterState(t, brokers, "dry")
	_, stderr, code = run(t, "", "reset", "--pipeline", compacted, "--to", "earliest", "--truncate-output", "--brokers", b.Addr(), "--registry-unsigned")
	if code != 1 || !strings.Contains(stderr, "cannot truncate table-out (sink): its cleanup.policy is compact") {
		t.Fatalf("truncating a compacted sink: exit %d: %s", code, stderr)
	}
	if after := clusterState(t, brokers, "dry"); after != before {
		t.Fatalf("a refused reset changed the cluster:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, stderr, code = run(t, "", "reset", "--pipeline", pipe, "--to", "latest", "--brokers", b.Addr()); code != 1 || !strings.Contains(stderr, "want earliest") {
		t.Fatalf("--to latest: exit %d: %s", code, stderr)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResetToTimestamp: --to TIMESTAMP (RFC 3339 or Unix milliseconds)
// commits, for each partition of the source topic, the offset of its first
// record at or after it, and the end offset where there is none.
func TestResetToTimestamp(t *testing.T) {
	const base = int64(1700000000000)
	b, adm := resetBroker(t, base, "out", "dlq")
	brokers := []string{b.Addr()}
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := writePipeline(t, fmt.Sprintf(`name: ts
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
`, upper))
	commitAtEnd(t, adm, "ts", "in")
	// Where each record is.
	type rec struct{ offset, ts int64 }
	parts := map[int32][]rec{}
	if _, err := host.Consume(context.Background(), brokers, "in", host.ConsumeOptions{Max: 100, Idle: 2 * time.Second}, func(r abi.Record, m host.Meta) error {
		parts[m.Partition] = append(parts[m.Partition], rec{m.Offset, r.Timestamp})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	expect := func(at int64) map[int32]int64 {
		want := map[int32]int64{}
		for p := int32(0); p < 4; p++ {
			want[p] = int64(len(parts[p])) // the end, if no record is at or after at
			for _, r := range parts[p] {
				if r.ts >= at {
					want[p] = r.offset
					break
				}
			}
		}
		return want
	}
	committed := func() map[int32]int64 {
		offs, err := adm.FetchOffsets(context.Background(), "ts")
		if err != nil {
			t.Fatal(err)
		}
		got := map[int32]int64{}
		offs.Each(func(o kadm.OffsetResponse) { got[o.Partition] = o.At })
		return got
	}
	tests := []struct {
		name string
		to   string
		at   int64
	}{
		{"rfc3339, between records", time.UnixMilli(base + 41_500).UTC().Format(time.RFC3339Nano), base + 41_500},
		{"unix milliseconds, on a record", fmt.Sprint(base + 73_000), base + 73_000},
		{"after every record: the end", fmt.Sprint(base + 500_000), base + 500_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", "reset", "--pipeline", pipe, "--to", tt.to, "--brokers", b.Addr(), "--registry-unsigned")
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if want, got := expect(tt.at), committed(); !reflect.DeepEqual(got, want) {
				t.Fatalf("committed %v, want %v\n%s", got, want, stdout)
			}
			if !strings.Contains(stdout, "(source topic, the first record at or after "+time.UnixMilli(tt.at).UTC().Format(time.RFC3339Nano)+")") {
				t.Fatalf("plan:\n%s", stdout)
			}
		})
	}
}
