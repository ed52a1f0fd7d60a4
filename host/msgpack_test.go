package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/abi"
)

// TestMsgpackKeyByWindowsWithTimeField runs a msgpack pipeline on the
// test's broker: records keyed by a nested MessagePack field (user.id),
// repartitioned, and counted per key in 1 s tumbling windows with event time
// from another nested field (ev.ts). The ids are integers encoded in
// different widths, or as floats, or strings; the times are integers,
// floats, RFC 3339 strings and MessagePack timestamps: equal ids must be one
// key, and every window's count must equal a reference computed here,
// exactly once. Records that do not parse go to the dead-letter topic,
// each with its reason, from the step that read it.
func TestMsgpackKeyByWindowsWithTimeField(t *testing.T) {
	b := startBroker(t, "in", "out", "dlq", "late")
	brokers := []string{b.Addr()}
	count, _ := filepath.Abs("../testdata/go/nx-count.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: mp
source: {topics: [in], format: msgpack}
steps:
  - {name: by-user, kind: key_by, field: user.id}
  - name: count
    kind: aggregate
    function: %s
    time_field: ev.ts
    window: {type: tumbling, size: 1s, disorder: 300ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 50ms
batch_size: 100
`, count))
	const base = int64(1700000000000)
	// value encodes {"user": {"id": id}, "ev": {"ts": ts}, "n": n}.
	value := func(id, ts any, n int) []byte {
		var buf bytes.Buffer
		e := msgpack.NewEncoder(&buf)
		e.EncodeMapLen(3)
		e.EncodeString("user")
		e.EncodeMapLen(1)
		e.EncodeString("id")
		if err := e.Encode(id); err != nil {
			t.Fatal(err)
		}
		e.EncodeString("ev")
		e.EncodeMapLen(1)
		e.EncodeString("ts")
		if err := e.Encode(ts); err != nil {
			t.Fatal(err)
		}
		e.EncodeString("n")
		e.EncodeInt(int64(n))
		return buf.Bytes()
	}
	type wk struct {
		key   string
		start int64
	}
	want := map[wk]int{}
	rng := rand.New(rand.NewPCG(7, 8))
	var recs []abi.Record
	for i := range 3000 {
		u := i % 5
		key := strconv.Itoa(u)
		var id any
		switch i % 4 {
		case 0:
			id = int8(u)
		case 1:
			id = uint32(u)
		case 2:
			id = float64(u) // the same key as the integer
		default:
			id = int64(u)
		}
		if u == 4 {
			id, key = "four", "four"
		}
		ms := base + int64(i)*3 + rng.Int64N(250)
		var ts any
		switch i % 4 {
		case 0:
			ts = ms
		case 1:
			ts = float64(ms) + 0.75 // rounded down to the millisecond
		case 2:
			ts = time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
		default:
			ts = time.UnixMilli(ms).Add(123 * time.Microsecond) // a MessagePack timestamp
		}
		recs = append(recs, abi.Record{Key: []byte("r" + strconv.Itoa(i)), Timestamp: base - 86_400_000, Value: value(id, ts, i)})
		want[wk{key, ms / 1000 * 1000}]++
	}
	bad := []struct {
		value  []byte
		step   string
		reason string
	}{
		{[]byte(`{"user":{"id":1},"ev":{"ts":1}}`), "by-user", "key_by: the value: not valid MessagePack: 30 bytes after the value"},
		{value(1, base, 0)[:20], "by-user", "not valid MessagePack: the value ends early"},
		{append(value(1, base, 0), 0xc1), "by-user", "not valid MessagePack: 1 byte after the value"},
		{value(nil, base, 0), "by-user", "key_by: field user.id is null"},
		{[]byte{0x92, 1, 2}, "by-user", "key_by: the value is not a MessagePack map"},
		{value(2, true, 0), "count", "msgpack timestamp ev.ts: want integer milliseconds, a float of milliseconds, an RFC 3339 string or a timestamp, got a boolean"},
		{value(2, "yesterday", 0), "count", `msgpack timestamp ev.ts: parsing time "yesterday"`},
	}
	for j, bd := range bad {
		recs = append(recs[:500*j:500*j], append([]abi.Record{{Key: []byte("bad" + strconv.Itoa(j)), Value: bd.value}}, recs[500*j:]...)...)
	}
	// Far ahead on every partition: closes every window above.
	for j := range 40 {
		recs = append(recs, abi.Record{Key: []byte("close" + strconv.Itoa(j)), Value: value(0, base+3_600_000, 0)})
	}
	produceAll(t, brokers, "in", recs)
	node := startStatefulNode(t, brokers, p, "one", t.TempDir())
	out := consumeAll(t, b, "out", len(want), 2*time.Second)
	dlq := consumeAll(t, b, "dlq", len(bad), time.Second)
	node.stop(t)

	got := map[wk]int{}
	for _, r := range out {
		start, _ := strconv.ParseInt(header(r, "eddy.window.start"), 10, 64)
		var v struct{ Count int }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("result %q: %v", r.Value, err)
		}
		w := wk{string(r.Key), start}
		if _, dup := got[w]; dup {
			t.Fatalf("window %v emitted twice", w)
		}
		got[w] = v.Count
	}
	var diffs []string
	for w, n := range want {
		if got[w] != n {
			diffs = append(diffs, fmt.Sprintf("%v: got %d want %d", w, got[w], n))
		}
	}
	for w := range got {
		if _, ok := want[w]; !ok {
			diffs = append(diffs, fmt.Sprintf("%v: unexpected %d", w, got[w]))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%d of %d windows differ, e.g. %v", len(diffs), len(want), diffs[:min(5, len(diffs))])
	}
	if late := consumeAll(t, b, "late", 0, 500*time.Millisecond); len(late) != 0 {
		t.Fatalf("%d late records, want none", len(late))
	}

	// Each malformed record once, from the step that read it, with its
	// reason and its place in the source.
	if len(dlq) != len(bad) {
		t.Fatalf("%d dead letters, want %d: %+v", len(dlq), len(bad), dlq)
	}
	for _, d := range dlq {
		j, err := strconv.Atoi(strings.TrimPrefix(string(d.Key), "bad"))
		if err != nil || !strings.HasPrefix(string(d.Key), "bad") || j >= len(bad) {
			t.Fatalf("dead letter of %q", d.Key)
		}
		bd := bad[j]
		if !bytes.Equal(d.Value, bd.value) || header(d, "eddy.step") != bd.step || header(d, "eddy.error.code") != "bad_input" ||
			!strings.Contains(header(d, "eddy.error"), bd.reason) || header(d, "eddy.source.topic") != "in" {
			t.Errorf("dead letter %d: step %s, error %q, code %s, value %x; want step %s, error saying %q",
				j, header(d, "eddy.step"), header(d, "eddy.error"), header(d, "eddy.error.code"), d.Value, bd.step, bd.reason)
		}
	}
}

// TestMsgpackJoinNests: in a msgpack pipeline, a join without a function
// outputs a MessagePack map {"left": L, "right": R}, the values embedded,
// nil for a missing side, binary for a value that is not MessagePack.
func TestMsgpackJoinNests(t *testing.T) {
	p := loadPipeline(t, `name: enrich
source: {topics: [orders], format: msgpack}
tables:
  - {name: users, topic: users, global: true}
steps:
  - {name: enrich, kind: join, table: users, type: left}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
`)
	ctx := context.Background()
	ip := startInProcess(t, p, 2)
	out := ipOutput{}
	ip.Out = out.collect
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	users := []abi.Record{
		{Key: []byte("u1"), Value: mp(map[string]string{"name": "ann"})},
		{Key: []byte("u2"), Value: []byte(`{"name":"bob"}`)}, // JSON: not MessagePack
	}
	if err := ip.Send(ctx, "users", users); err != nil {
		t.Fatal(err)
	}
	var orders []abi.Record
	for _, u := range []string{"u1", "u2", "u3"} {
		orders = append(orders, abi.Record{Key: []byte(u), Value: mp(map[string]int{"order": len(orders)})})
	}
	if err := ip.Send(ctx, "orders", orders); err != nil {
		t.Fatal(err)
	}
	if err := ip.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"u1": `{"left":{"order":0},"right":{"name":"ann"}}`,
		"u2": `{"left":{"order":1},"right":"eyJuYW1lIjoiYm9iIn0="}`, // binary, as base64
		"u3": `{"left":{"order":2},"right":null}`,
	}
	if len(out["out"]) != len(want) || len(out["dlq"]) != 0 {
		t.Fatalf("output %+v, dead letters %+v", out["out"], out["dlq"])
	}
	for _, r := range out["out"] {
		var v map[string]any
		if err := msgpack.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("%s: %x is not MessagePack: %v", r.Key, r.Value, err)
		}
		got, _ := json.Marshal(v)
		if string(got) != want[string(r.Key)] {
			t.Errorf("%s: %s, want %s", r.Key, got, want[string(r.Key)])
		}
	}
}
