package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/await"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// TestCrashTimersExactlyOnce runs the timeout guest (an event-time timer
// per key, moved at every record of the key; a firing that matches emits
// an alert) under exactly_once and kills its node with SIGKILL while
// timers fire, restarting it each time — twice on a fresh node with an
// empty data directory, whose timers come from their changelog. Every
// alert of the record-by-record reference of each partition must be in the
// output once: no timer lost, none fired twice.
func TestCrashTimersExactlyOnce(t *testing.T) {
	forMemberships(t, crashTimers, staticMember, dynamicMember)
}

// timerAlert is an alert of the timeout guest.
type timerAlert struct {
	key        string
	last, fire int64
}

// timeoutReference is what the timeout guest emits for the records of one
// partition, in the order read: before each record the timers at or before
// the watermark (the largest time before it) fire; at the end, those at or
// before the final watermark (the input of a node does not end).
func timeoutReference(recs []abi.Record) []timerAlert {
	last := map[string]int64{}
	wm := int64(-1 << 63)
	var out []timerAlert
	fire := func() {
		for k, t := range last {
			if t+1000 <= wm {
				out = append(out, timerAlert{k, t, t + 1000})
				delete(last, k)
			}
		}
	}
	for _, r := range recs {
		fire()
		last[string(r.Key)] = r.Timestamp
		wm = max(wm, r.Timestamp)
	}
	fire()
	return out
}

func crashTimers(t *testing.T, bin string, m membership) {
	brokers := brokerProc(t, bin, "in", "out", "dlq")
	const base = int64(1_700_000_000_000)
	rng := rand.New(rand.NewPCG(11, 12))
	var recs []abi.Record
	ts := base
	for i := range 60_000 {
		ts += rng.Int64N(60)
		key := fmt.Sprintf("k%02d", rng.IntN(24))
		recs = append(recs, abi.Record{Key: []byte(key), Value: []byte(strconv.Itoa(i)), Timestamp: ts})
	}
	produce(t, brokers, "in", recs)
	fn, _ := filepath.Abs(td("go/timeout.wasm"))
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: tcrash
source: {topics: [in]}
steps:
  - {name: quiet, kind: filter, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 100ms
batch_size: 100
`, fn)), 0o644)
	cache, data := t.TempDir(), t.TempDir()
	start := func(dataDir string) *exec.Cmd { return nodeProc(t, bin, cache, pipe, brokers[0], dataDir, m) }
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	rng2 := rand.New(rand.NewPCG(13, 14))
	for kill := range m.kills {
		dir := data
		if kill == 2 || kill == 4 {
			dir = t.TempDir() // a fresh node: its timers come from the changelog
		}
		old := memberIDs(brokers, "tcrash")
		node := start(dir)
		if m.settle() {
			awaitJoined(t, brokers, "tcrash", old)
		}
		killMidJob(node, adm, "out", time.Duration(50+rng2.IntN(600))*time.Millisecond)
		t.Logf("SIGKILL %d: %d committed alerts so far", kill+1, committed(brokers, "out"))
	}
	old := memberIDs(brokers, "tcrash")
	node := start(data)
	behind := func() int64 { return groupBehind(adm, "tcrash", "in") }
	await.Until(t, 100*time.Millisecond, func() bool { return behind() == 0 },
		func() string { return fmt.Sprintf("the group is %d records behind the input's end", behind()) })
	// The killed nodes may have committed everything already: the last
	// one is stopped once it has joined (and handles signals).
	awaitJoined(t, brokers, "tcrash", old)
	stopCleanly(t, node, "the last node")
	testkafka.AwaitSettled(t, brokers, "out")

	byPart := map[int32][]abi.Record{}
	host.Consume(context.Background(), brokers, "in", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, meta host.Meta) error {
		byPart[meta.Partition] = append(byPart[meta.Partition], abi.Record{Key: slices.Clone(r.Key), Timestamp: r.Timestamp})
		return nil
	})
	want := map[timerAlert]int{}
	partOf := map[timerAlert]int32{}
	n := 0
	for p, rs := range byPart {
		for _, a := range timeoutReference(rs) {
			want[a]++
			partOf[a] = p
			n++
		}
	}
	got := map[timerAlert]int{}
	out := 0
	host.Consume(context.Background(), brokers, "out", host.ConsumeOptions{Idle: time.Second}, func(r abi.Record, _ host.Meta) error {
		last, _ := strconv.ParseInt(string(r.Value), 10, 64)
		got[timerAlert{string(r.Key), last, r.Timestamp}]++
		out++
		return nil
	})
	var missing, dup, extra []timerAlert
	for a, c := range want {
		switch g := got[a]; {
		case g < c:
			missing = append(missing, a)
		case g > c:
			dup = append(dup, a)
		}
	}
	for a := range got {
		if want[a] == 0 {
			extra = append(extra, a)
		}
	}
	order := func(a, b timerAlert) int { return cmp.Or(cmp.Compare(a.fire, b.fire), cmp.Compare(a.key, b.key)) }
	slices.SortFunc(missing, order)
	slices.SortFunc(dup, order)
	slices.SortFunc(extra, order)
	t.Logf("%d alerts out, %d in the reference", out, n)
	if len(missing) > 0 {
		// Where the missing alerts are: per partition, how many, their
		// firing times, and the partition's last record time.
		type span struct {
			n           int
			first, last int64
		}
		byP := map[int32]*span{}
		for _, a := range missing {
			sp := byP[partOf[a]]
			if sp == nil {
				sp = &span{first: a.fire}
				byP[partOf[a]] = sp
			}
			sp.n++
			sp.last = a.fire
		}
		for p, sp := range byP {
			rs := byPart[p]
			t.Logf("partition %d: %d alerts missing, fired %d..%d; its records run %d..%d (%d records)",
				p, sp.n, sp.first, sp.last, rs[0].Timestamp, rs[len(rs)-1].Timestamp, len(rs))
		}
	}
	if len(missing)+len(dup)+len(extra) > 0 {
		t.Fatalf("%d alerts missing (first %v), %d duplicated (first %v), %d unexpected (first %v)",
			len(missing), head(missing), len(dup), head(dup), len(extra), head(extra))
	}
}

func head[T any](s []T) []T { return s[:min(len(s), 3)] }
