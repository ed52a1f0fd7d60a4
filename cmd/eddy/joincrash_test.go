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

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
)

// TestCrashJoinExactlyOnce runs an outer stream-stream join under
// exactly_once and kills its node with SIGKILL several times, once
// restarting it on an empty data directory. The output must equal a
// brute-force join of the input: every pair within the window and every
// unmatched record, each exactly once.
func TestCrashJoinExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs processes; skipped with -short")
	}
	bin := buildEddy(t)
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
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], "j", dataDir) }
	count := func() int { return committed(brokers, "out") }
	rng2 := rand.New(rand.NewPCG(11, 12))
	for kill := 0; kill < 4; kill++ {
		dir := data
		if kill == 2 {
			dir = t.TempDir() // a fresh node: the buffers come from the changelog
		}
		node := start(dir)
		time.Sleep(time.Duration(500+rng2.IntN(700)) * time.Millisecond)
		node.Process.Signal(syscall.SIGKILL)
		node.Wait()
		t.Logf("SIGKILL %d: %d committed join results so far", kill+1, count())
	}
	node := start(data)
	deadline := time.Now().Add(2 * time.Minute)
	for count() < results && time.Now().Before(deadline) { // the closers match nothing and never expire
		time.Sleep(time.Second)
	}
	node.Process.Signal(syscall.SIGTERM)
	if err := node.Wait(); err != nil {
		t.Errorf("the last node did not stop cleanly: %v", err)
	}
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
// table under exactly_once while the node is killed with SIGKILL several
// times (once restarting on an empty data directory, whose table store then
// comes from the table's topic). Every order must come out exactly once,
// with its user.
func TestCrashTableJoinExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs processes; skipped with -short")
	}
	bin := buildEddy(t)
	brokers := brokerProc(t, bin, "orders", "users", "out", "dlq", "late")
	const users, orders = 2000, 300000
	i := 0
	if _, err := host.Produce(context.Background(), brokers, "users", func() (abi.Record, error) {
		if i >= users {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte(fmt.Sprintf("u%d", i-1)), Value: []byte(fmt.Sprintf(`{"name":"user %d"}`, i-1))}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(`name: tcrash
source: {topics: [orders]}
tables: [{name: users, topic: users}]
steps:
  - {name: enrich, kind: join, table: users, type: left}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 100ms
batch_size: 100
`), 0o644)
	cache, data := t.TempDir(), t.TempDir()
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], "t", dataDir) }
	// The first node loads the table before any order exists.
	node := start(data)
	time.Sleep(3 * time.Second)
	node.Process.Signal(syscall.SIGKILL)
	node.Wait()
	i = 0
	if _, err := host.Produce(context.Background(), brokers, "orders", func() (abi.Record, error) {
		if i >= orders {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte(fmt.Sprintf("u%d", (i-1)%users)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i-1))}, nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	count := func() int { return committed(brokers, "out") }
	rng := rand.New(rand.NewPCG(13, 14))
	for kill := 0; kill < 4; kill++ {
		dir := data
		if kill == 2 {
			dir = t.TempDir() // a fresh node: the table comes from its topic
		}
		node := start(dir)
		time.Sleep(time.Duration(500+rng.IntN(700)) * time.Millisecond)
		node.Process.Signal(syscall.SIGKILL)
		node.Wait()
		t.Logf("SIGKILL %d: %d committed orders so far", kill+1, count())
	}
	node = start(data)
	deadline := time.Now().Add(2 * time.Minute)
	for count() < orders && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	node.Process.Signal(syscall.SIGTERM)
	if err := node.Wait(); err != nil {
		t.Errorf("the last node did not stop cleanly: %v", err)
	}
	seen := map[string]int{}
	bad := 0
	host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		var v struct{ Left, Right json.RawMessage }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return err
		}
		seen[string(v.Left)]++
		var u int
		fmt.Sscanf(string(r.Key), "u%d", &u)
		if string(v.Right) != fmt.Sprintf(`{"name":"user %d"}`, u) {
			bad++
			if bad <= 3 {
				t.Errorf("order %s of %s: right side %s", v.Left, r.Key, v.Right)
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
		t.Fatalf("%d distinct orders of %d, %d more than once, %d without their user", len(seen), orders, dups, bad)
	}
}
