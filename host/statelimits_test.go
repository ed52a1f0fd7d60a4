package host_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
)

// TestOversizedKeyDeadLetters sends a record with a 100,000-byte key into a
// stateful step (a `state: true` counter, and an aggregate) under both
// guarantees. Badger refuses keys over 65,000 bytes when the store commits,
// which stopped the node, again after every restart (issue 14, item 3).
// The record must go to the dead-letter topic with the reason, the others
// be processed, and the node must restart on its data directory and go on.
func TestOversizedKeyDeadLetters(t *testing.T) {
	for _, kind := range []string{"process", "aggregate"} {
		for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
			t.Run(kind+"/"+string(d), func(t *testing.T) { testOversizedKey(t, kind, d) })
		}
	}
}

func testOversizedKey(t *testing.T, kind string, d host.Delivery) {
	b := startBroker(t, "in", "out", "dlq")
	brokers := []string{b.Addr()}
	step := "  - {name: count, kind: map, function: %s, state: true}"
	guest := "../testdata/go/counter.wasm"
	if kind == "aggregate" {
		step = "  - {name: count, kind: aggregate, function: %s, window: {type: global, count: 2}}"
		guest = "../testdata/go/stats.wasm"
	}
	wasm, _ := filepath.Abs(guest)
	p := loadPipeline(t, fmt.Sprintf("name: bigkey\nsource: {topics: [in]}\nsteps:\n"+step+`
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
`, wasm, d))
	big := bytes.Repeat([]byte{'k'}, 100_000)
	rec := func(key []byte) abi.Record { return abi.Record{Key: key, Value: []byte("1")} }
	produceAll(t, brokers, "in", []abi.Record{rec([]byte("alice")), rec(big), rec([]byte("alice")), rec([]byte("bob"))})
	dir := t.TempDir()
	n1 := startStatefulNode(t, brokers, p, "one", dir)
	dlq := consumeAll(t, b, "dlq", 1, time.Second)
	wantOut := 2 // alice 1, 2 and bob 1; or alice's first window
	if kind == "aggregate" {
		wantOut = 1
	}
	out := consumeAll(t, b, "out", wantOut, time.Second)
	n1.stop(t)
	if len(dlq) != 1 || len(dlq[0].Key) != len(big) {
		t.Fatalf("dead-lettered %d records, want the one with the big key", len(dlq))
	}
	if code, reason := header(dlq[0], "eddy.error.code"), header(dlq[0], "eddy.error"); code != "state_limit" ||
		!strings.Contains(reason, "key of 100000 bytes is over the limit of 16384 bytes") {
		t.Errorf("dead letter: code %q, reason %q; want state_limit and the key's size", code, reason)
	}
	// The node restarts on its directory (the big key is in no store) and
	// goes on from its state.
	produceAll(t, brokers, "in", []abi.Record{rec([]byte("alice")), rec([]byte("alice"))})
	n2 := startStatefulNode(t, brokers, p, "two", dir)
	if kind == "aggregate" {
		out = consumeAll(t, b, "out", 2, time.Second)
	} else {
		out = consumeAll(t, b, "out", 5, time.Second)
	}
	n2.stop(t)
	var got []string
	for _, r := range out {
		if kind == "aggregate" {
			var res struct{ Count int }
			json.Unmarshal(r.Value, &res)
			got = append(got, fmt.Sprintf("%s:%d", r.Key, res.Count))
			continue
		}
		got = append(got, fmt.Sprintf("%s:%s", r.Key, r.Value))
	}
	slices.Sort(got)
	want := []string{"alice:1", "alice:2", "alice:3", "alice:4", "bob:1"}
	if kind == "aggregate" {
		want = []string{"alice:2", "alice:2"}
	}
	if !slices.Equal(got, want) {
		t.Errorf("output %v, want %v", got, want)
	}
}

// TestTrapDropsStateWrites runs a counter that traps on one record of a
// batch after writing its state: the host bisects the batch and re-runs its
// halves, and the writes of the calls that failed must not count (issue 14,
// item 5: every re-run counted the records again).
func TestTrapDropsStateWrites(t *testing.T) {
	for _, d := range []host.Delivery{host.ExactlyOnce, host.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			b := startBroker(t, "in", "out", "dlq")
			brokers := []string{b.Addr()}
			wasm, _ := filepath.Abs("../testdata/go/trapcount.wasm")
			p := loadPipeline(t, fmt.Sprintf(`name: trapcount
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: %s
commit_interval: 50ms
`, wasm, d))
			var recs []abi.Record
			for _, v := range []string{"a", "a", "trap", "a", "a", "a"} {
				recs = append(recs, abi.Record{Key: []byte("alice"), Value: []byte(v)})
			}
			produceAll(t, brokers, "in", recs) // before the node starts: one batch
			n := startStatefulNode(t, brokers, p, "one", t.TempDir())
			dlq := consumeAll(t, b, "dlq", 1, time.Second)
			out := consumeAll(t, b, "out", 5, time.Second)
			n.stop(t)
			var got []string
			for _, r := range out {
				got = append(got, string(r.Value))
			}
			if want := []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
				t.Errorf("counts %v, want %v", got, want)
			}
			if len(dlq) != 1 || string(dlq[0].Value) != "trap" || header(dlq[0], "eddy.error.code") != "trap" {
				t.Errorf("dead letters %v, want the trap record (code trap)", dlq)
			}
		})
	}
}

// TestOversizedKeyDeadLettersInAJoin: a stream-stream join buffers its
// records under their keys; a record with a 100,000-byte key is
// dead-lettered before it reaches the buffer, the others join, and the node
// restarts on its directory.
func TestOversizedKeyDeadLettersInAJoin(t *testing.T) {
	b := startBroker(t, "orders", "payments", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	p := loadPipeline(t, `name: bigjoin
source: {topics: [orders]}
steps:
  - name: match
    kind: join
    stream: payments
    type: inner
    window: {before: 1s, after: 1s}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
`)
	const base = int64(1700000000000)
	big := bytes.Repeat([]byte{'k'}, 100_000)
	rec := func(key []byte, v string, dt int64) abi.Record {
		return abi.Record{Key: key, Value: []byte(`"` + v + `"`), Timestamp: base + dt}
	}
	produceAll(t, brokers, "orders", []abi.Record{rec([]byte("alice"), "o1", 0), rec(big, "o2", 0), rec([]byte("bob"), "o3", 0)})
	produceAll(t, brokers, "payments", []abi.Record{rec([]byte("alice"), "p1", 100), rec(big, "p2", 100), rec([]byte("bob"), "p3", 100)})
	dir := t.TempDir()
	n1 := startStatefulNode(t, brokers, p, "one", dir)
	dlq := consumeAll(t, b, "dlq", 2, time.Second)
	out := consumeAll(t, b, "out", 2, time.Second)
	n1.stop(t)
	if len(dlq) != 2 {
		t.Fatalf("dead-lettered %d records, want the two with the big key", len(dlq))
	}
	for _, r := range dlq {
		if len(r.Key) != len(big) || header(r, "eddy.error.code") != "state_limit" ||
			!strings.Contains(header(r, "eddy.error"), "key of 100000 bytes is over the limit of 16384 bytes") {
			t.Errorf("dead letter of a %d-byte key: code %q, reason %q", len(r.Key), header(r, "eddy.error.code"), header(r, "eddy.error"))
		}
	}
	produceAll(t, brokers, "orders", []abi.Record{rec([]byte("alice"), "o4", 200)})
	n2 := startStatefulNode(t, brokers, p, "two", dir)
	out = consumeAll(t, b, "out", 3, time.Second)
	n2.stop(t)
	var keys []string
	for _, r := range out {
		keys = append(keys, string(r.Key))
	}
	slices.Sort(keys)
	if want := []string{"alice", "alice", "bob"}; !slices.Equal(keys, want) {
		t.Errorf("joined %v, want %v", keys, want)
	}
}

// TestRestoreSkipsWhatTheStoreCannotHold: a changelog holding a record with
// a 100,000-byte key (which a node before the state limits committed to it
// before Badger refused the checkpoint, or anyone could write) made every
// restore fail. The record is skipped with a warning and the rest restores.
func TestRestoreSkipsWhatTheStoreCannotHold(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "old-count-changelog")
	brokers := []string{b.Addr()}
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: old
source: {topics: [in]}
steps:
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
`, counter))
	// Keys go to the partitions their records go to in the source topic.
	produceAll(t, brokers, "old-count-changelog", []abi.Record{
		{Key: []byte("alice"), Value: []byte("5")},
		{Key: bytes.Repeat([]byte{'k'}, 100_000), Value: []byte("1")},
		{Key: []byte("bob"), Value: []byte("7")},
	})
	produceAll(t, brokers, "in", []abi.Record{{Key: []byte("alice"), Value: []byte("x")}, {Key: []byte("bob"), Value: []byte("x")}})
	n := startStatefulNode(t, brokers, p, "one", t.TempDir())
	out := consumeAll(t, b, "out", 2, time.Second)
	n.stop(t)
	var got []string
	for _, r := range out {
		got = append(got, fmt.Sprintf("%s:%s", r.Key, r.Value))
	}
	slices.Sort(got)
	if want := []string{"alice:6", "bob:8"}; !slices.Equal(got, want) {
		t.Errorf("counted %v, want %v: the restore did not go past the big key", got, want)
	}
}
