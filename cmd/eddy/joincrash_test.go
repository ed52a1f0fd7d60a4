package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestCrashJoinExactlyOnce runs an outer stream-stream join under
// exactly_once and kills its node with SIGKILL several times, once
// restarting it on an empty data directory. The output must equal a
// brute-force join of the input: every pair within the window and every
// unmatched record, each exactly once.
func TestCrashJoinExactlyOnce(t *testing.T) {
	forMemberships(t, crashJoin, staticMember, dynamicMember)
}

func crashJoin(t *testing.T, bin string, m membership) {
	brokers := brokerProc(t, bin, "orders", "payments", "out", "dlq", "late")

	const base = int64(1700000000000)
	type ev struct {
		key string
		t   int64
		v   string
	}
	rng := rand.New(rand.NewPCG(9, 10))
	var orders, payments []ev
	const total = 120000
	for i := 0; i < total; i++ {
		o := ev{fmt.Sprintf("o%d", i%30000), base + int64(i)*10, fmt.Sprintf(`{"order":%d}`, i)}
		orders = append(orders, o)
		if i%3 != 0 {
			payments = append(payments, ev{o.key, o.t - 1500 + rng.Int64N(4500), fmt.Sprintf(`{"pay":%d}`, i)})
		}
	}
	sort.SliceStable(payments, func(i, j int) bool { return payments[i].t < payments[j].t })
	byKey := map[string][]int{}
	for j, p := range payments {
		byKey[p.key] = append(byKey[p.key], j)
	}
	want := map[string]int{}
	matched := map[int]bool{}
	for _, o := range orders {
		found := false
		for _, j := range byKey[o.key] {
			if p := payments[j]; p.t >= o.t-1000 && p.t <= o.t+2000 {
				want[o.key+" "+o.v+" "+p.v]++
				found, matched[j] = true, true
			}
		}
		if !found {
			want[o.key+" "+o.v+" null"]++
		}
	}
	for j, p := range payments {
		if !matched[j] {
			want[p.key+" null "+p.v]++
		}
	}
	results := 0
	for _, c := range want {
		results += c
	}
	produce := func(topic string, evs []ev) {
		i := 0
		if _, err := host.Produce(context.Background(), brokers, topic, func() (abi.Record, error) {
			if i < len(evs) {
				i++
				return abi.Record{Key: []byte(evs[i-1].key), Value: []byte(evs[i-1].v), Timestamp: evs[i-1].t}, nil
			}
			if i < len(evs)+40 { // far ahead on every partition: closes every window above
				i++
				return abi.Record{Key: []byte(fmt.Sprintf("close%d", i)), Value: []byte("0"), Timestamp: base + 10_000_000}, nil
			}
			return abi.Record{}, io.EOF
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	produce("orders", orders)
	produce("payments", payments)

	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(`name: jcrash
source: {topics: [orders]}
steps:
  - name: match
    kind: join
    stream: payments
    type: outer
    window: {before: 1s, after: 2s, grace: 500ms, disorder: 200ms}
sink: {topic: out}
dead_letter: {topic: dlq}
late: {topic: late}
delivery: exactly_once
commit_interval: 100ms
batch_size: 100
`), 0o644)
	cache, data := t.TempDir(), t.TempDir()
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], dataDir, m) }
	count := func() int { return committed(brokers, "out") }
	rng2 := rand.New(rand.NewPCG(11, 12))
	for kill := 0; kill < 4; kill++ {
		dir := data
		if kill == 2 {
			dir = t.TempDir() // a fresh node: the buffers come from the changelog
		}
		old := memberIDs(brokers, "jcrash")
		node := start(dir)
		if m.settle() {
			awaitJoined(t, brokers, "jcrash", old)
		}
		time.Sleep(time.Duration(500+rng2.IntN(700)) * time.Millisecond)
		node.Process.Signal(syscall.SIGKILL)
		node.Wait()
		t.Logf("SIGKILL %d: %d committed join results so far", kill+1, count())
	}
	old := memberIDs(brokers, "jcrash")
	node := start(data)
	deadline := time.Now().Add(2 * time.Minute)
	for count() < results && time.Now().Before(deadline) { // the closers match nothing and never expire
		time.Sleep(time.Second)
	}
	awaitJoined(t, brokers, "jcrash", old)
	stopCleanly(t, node, "the last node")
	testkafka.AwaitSettled(t, brokers, "out")
	got := map[string]int{}
	host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		if strings.HasPrefix(string(r.Key), "close") {
			return nil
		}
		var v struct{ Left, Right json.RawMessage }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return err
		}
		got[string(r.Key)+" "+string(v.Left)+" "+string(v.Right)]++
		return nil
	})
	wrong := 0
	for k, c := range want {
		if got[k] != c {
			wrong++
			if wrong <= 3 {
				t.Errorf("%s: got %d, want %d", k, got[k], c)
			}
		}
	}
	for k, c := range got {
		if _, ok := want[k]; !ok {
			wrong++
			if wrong <= 6 {
				t.Errorf("%s: got %d, not in the reference", k, c)
			}
		}
	}
	if wrong > 0 {
		late, _ := host.Consume(context.Background(), brokers, "late", host.ConsumeOptions{Idle: time.Second}, func(abi.Record, host.Meta) error { return nil })
		t.Fatalf("%d of %d results wrong; %d late records", wrong, len(want), late)
	}
}

// TestCrashTableJoinExactlyOnce enriches orders from a co-partitioned users
// table under exactly_once while the table is updated as the orders flow:
// the test writes the updates and the orders in time order, as one
// producer, in chunks while the node is killed with SIGKILL five times
// (once restarting on an empty data directory, whose table store then
// comes from the table's topic). Every order must come out exactly once,
// joined with the version of its user current at the order's timestamp:
// the reference is defined by timestamps alone.
//
// Static membership only: its dynamic variant stalled on the embedded broker
// (kfake: "unable to join group session: i/o timeout", no order joined in
// 134 s after four kills; docs/operating.md on kfake and dynamic members).
// The stream-stream join and the stateless and windowed crash tests run
// under both memberships.
func TestCrashTableJoinExactlyOnce(t *testing.T) {
	forMemberships(t, crashTableJoin, staticMember)
}

func crashTableJoin(t *testing.T, bin string, m membership) {
	brokers := brokerProc(t, bin, "orders", "users", "out", "dlq", "late")
	const (
		base    = int64(1700000000000)
		users   = 500
		orders  = 150000 // order i at base + 10i
		updates = 3000   // update j at base + 500j + 5, of user 7919j mod users
		chunks  = 10
	)
	// The records in time order (a table update before an order of the
	// same time, though none has).
	var all []*kgo.Record
	rec := func(topic, key, value string, at int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value), Timestamp: time.UnixMilli(at)}
	}
	version := make([]int, users)
	for u := range users {
		all = append(all, rec("users", fmt.Sprintf("u%d", u), fmt.Sprintf(`{"u":%d,"v":0}`, u), base-1))
	}
	// want[i] is the version of order i's user at its time: the last
	// update at or before it.
	want := make([]string, orders)
	current := make([]string, users)
	for u := range users {
		current[u] = fmt.Sprintf(`{"u":%d,"v":0}`, u)
	}
	j := 0
	for i := range orders {
		at := base + int64(i)*10
		for ; j < updates && base+int64(j)*500+5 <= at; j++ {
			u := j * 7919 % users
			version[u]++
			current[u] = fmt.Sprintf(`{"u":%d,"v":%d}`, u, version[u])
			all = append(all, rec("users", fmt.Sprintf("u%d", u), current[u], base+int64(j)*500+5))
		}
		all = append(all, rec("orders", fmt.Sprintf("u%d", i%users), fmt.Sprintf(`{"order":%d}`, i), at))
		want[i] = current[i%users]
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// produce writes records in order: each run of one topic is
	// acknowledged before the next run, of the other topic, is sent, so
	// that the broker's logs hold them in time order across the topics.
	produce := func(rs []*kgo.Record) error {
		for len(rs) > 0 {
			k := 1
			for k < len(rs) && rs[k].Topic == rs[0].Topic {
				k++
			}
			if err := cl.ProduceSync(context.Background(), rs[:k]...).FirstErr(); err != nil {
				return err
			}
			rs = rs[k:]
		}
		return nil
	}
	chunk := func(c int) []*kgo.Record { return all[c*len(all)/chunks : (c+1)*len(all)/chunks] }
	if err := produce(chunk(0)); err != nil {
		t.Fatal(err)
	}
	produced := make(chan error, 1)
	go func() {
		for c := 1; c < chunks; c++ {
			time.Sleep(400 * time.Millisecond)
			if err := produce(chunk(c)); err != nil {
				produced <- err
				return
			}
		}
		produced <- nil
	}()
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(`name: tcrash
source: {topics: [orders]}
tables: [{name: users, topic: users}]
steps:
  - {name: enrich, kind: join, table: users, type: left, max_idle: 1m}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 100ms
batch_size: 100
`), 0o644)
	cache, data := t.TempDir(), t.TempDir()
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], dataDir, m) }
	count := func() int { return committed(brokers, "out") }
	rng := rand.New(rand.NewPCG(13, 14))
	for kill := 0; kill < 5; kill++ {
		dir := data
		if kill == 2 {
			dir = t.TempDir() // a fresh node: the table comes from its topic
		}
		old := memberIDs(brokers, "tcrash")
		node := start(dir)
		if m.settle() {
			awaitJoined(t, brokers, "tcrash", old)
		}
		time.Sleep(time.Duration(500+rng.IntN(700)) * time.Millisecond)
		node.Process.Signal(syscall.SIGKILL)
		node.Wait()
		t.Logf("SIGKILL %d: %d committed orders so far", kill+1, count())
	}
	if err := await.Receive(t, produced, func() string { return "the test's producer did not finish" }); err != nil {
		t.Fatal(err)
	}
	old := memberIDs(brokers, "tcrash")
	node := start(data)
	await.Until(t, time.Second, func() bool { return count() >= orders },
		func() string { return fmt.Sprintf("%d of %d orders came out", count(), orders) })
	awaitJoined(t, brokers, "tcrash", old)
	stopCleanly(t, node, "the last node")
	testkafka.AwaitSettled(t, brokers, "out")
	seen := map[int]int{}
	bad := 0
	host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		var v struct {
			Left  struct{ Order int }
			Right json.RawMessage
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return err
		}
		seen[v.Left.Order]++
		if o := v.Left.Order; o < 0 || o >= orders || string(v.Right) != want[o] {
			bad++
			if bad <= 3 {
				t.Errorf("order %d of %s (t=%d): right side %s, want %s (the user as of the order's time)", o, r.Key, r.Timestamp, v.Right, want[max(0, min(o, orders-1))])
			}
		}
		return nil
	})
	dups := 0
	for _, c := range seen {
		if c > 1 {
			dups++
		}
	}
	if len(seen) != orders || dups > 0 || bad > 0 {
		t.Fatalf("%d distinct orders of %d, %d more than once, %d not joined with their user as of their time", len(seen), orders, dups, bad)
	}
}
