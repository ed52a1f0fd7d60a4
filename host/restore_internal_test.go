package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/state"
)

// TestWriteRestoreBatchBoundary: polls received while a batch is built go
// into it until it reaches the bound, and each batch is written with the
// checkpoint of its last poll, so that a restore stopped between two
// batches leaves a checkpoint that matches what the store holds. A poll of
// markers alone (no changes) still moves the checkpoint; a change the store
// cannot hold is skipped and counted, and its poll's checkpoint kept.
func TestWriteRestoreBatchBoundary(t *testing.T) {
	change := func(key string, size int) state.Change {
		return state.Change{Key: []byte(key), Value: bytes.Repeat([]byte{'v'}, size-len(key))}
	}
	chunks := []restoreChunk{
		{changes: []state.Change{change("a", 10), change("b", 10)}, next: 2},
		{changes: []state.Change{change("c", 10)}, next: 3}, // 30 bytes: the bound
		{changes: []state.Change{change("d", 10)}, next: 4},
		{next: 6}, // markers
		{changes: []state.Change{change("e", 10), change("big", 10)}, next: 8},
		{changes: []state.Change{change("f", 25)}, next: 9}, // 45 bytes: past it
		{changes: []state.Change{change("g", 10)}, next: 10},
	}
	type written struct {
		keys    string
		bytes   int
		next    int64
		polls   int
		skipped int
	}
	want := []written{
		{"abc", 30, 3, 2, 0},
		{"def", 45, 9, 4, 1},
		{"g", 10, 10, 1, 0},
	}
	// All polls are there before the writes begin, so each batch takes
	// polls until the bound.
	ch := make(chan restoreChunk, len(chunks))
	for _, c := range chunks {
		ch <- c
	}
	close(ch)
	restorable := func(key, _ []byte) bool { return string(key) != "big" }
	var got []written
	err := writeRestore(context.Background(), ch, 30, restorable, func(b *restoreBatch) error {
		w := written{bytes: b.bytes, next: b.next, polls: b.polls, skipped: b.skipped}
		for _, c := range b.changes {
			w.keys += string(c.Key)
		}
		got = append(got, w)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batches written %+v, want %+v", got, want)
	}

	// A write that fails stops the restore with its error.
	ch = make(chan restoreChunk, 1)
	ch <- chunks[0]
	close(ch)
	bad := errors.New("disk full")
	if err := writeRestore(context.Background(), ch, 30, restorable, func(*restoreBatch) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("writeRestore with a failing write returned %v, want %v", err, bad)
	}
	// A done context writes nothing more.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ch = make(chan restoreChunk, 1)
	ch <- chunks[0]
	if err := writeRestore(ctx, ch, 30, restorable, func(*restoreBatch) error {
		t.Fatal("wrote after its context was cancelled")
		return nil
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("writeRestore with a cancelled context returned %v", err)
	}
}

// TestRestoreCancelledMidway cancels a restore once it has written part of
// the changelog: it returns the context's error, and the store it leaves
// holds exactly the changelog's records before its checkpoint (overwrites
// and deletions included). A second restore goes on from that checkpoint
// and leaves the store as the whole changelog does. No goroutine of the
// first restore is left running.
func TestRestoreCancelledMidway(t *testing.T) {
	b, err := embedded.Start(embedded.Config{Partitions: 1, Topics: []string{"cl"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	// Large enough for several fetches and write batches: 48 MiB of
	// values that do not compress (a fetch's size is on the wire).
	const records, keys = 100_000, 20_000
	rnd := rand.NewChaCha8([32]byte{})
	recs := make([]abi.Record, records)
	for i := range recs {
		value := make([]byte, 500)
		rnd.Read(value)
		recs[i] = abi.Record{Key: fmt.Appendf(nil, "k%05d", i%keys), Value: value}
		if i%7 == 3 {
			recs[i].Value = nil // a tombstone: the key is deleted
		}
	}
	i := 0
	if _, err := Produce(context.Background(), []string{b.Addr()}, "cl", func() (abi.Record, error) {
		if i == len(recs) {
			return abi.Record{}, io.EOF
		}
		i++
		return recs[i-1], nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	// The store as the changelog's first upTo records leave it.
	upTo := func(upTo int64) map[string]string {
		m := map[string]string{}
		for _, r := range recs[:upTo] {
			if r.Value == nil {
				delete(m, string(r.Key))
			} else {
				m[string(r.Key)] = string(r.Value)
			}
		}
		return m
	}
	contents := func(st *state.Store) map[string]string {
		m := map[string]string{}
		if err := st.Scan(nil, func(k, v []byte) error { m[string(k)] = string(v); return nil }); err != nil {
			t.Fatal(err)
		}
		return m
	}

	n := &Node{cfg: NodeConfig{Brokers: []string{b.Addr()}}, log: slog.New(slog.DiscardHandler), metrics: &metrics{}}
	db, err := state.Open(t.TempDir(), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := &taskStore{st: db.Store("p", "s", 0), topic: "cl"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := n.restoreFromLog(ctx, ts, 0, -1)
		done <- err
	}()
	// Cancel as soon as a first batch is written.
	for n.metrics.restores.records.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the restore ended before it wrote anything: %v", err)
		case <-time.After(100 * time.Microsecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled restore returned %v, want context.Canceled", err)
	}
	if stacks := goroutines(); bytes.Contains(stacks, []byte("fetchChangelog")) {
		t.Fatalf("the restore's fetching goroutine outlived it:\n%s", stacks)
	}
	cp, err := ts.st.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if cp <= 0 || cp >= records {
		t.Fatalf("checkpoint %d after a cancelled restore, want one between 0 and %d", cp, records)
	}
	if got, want := contents(ts.st), upTo(cp); !maps.Equal(got, want) {
		t.Fatalf("after a restore cancelled at checkpoint %d the store holds %d keys, want the %d the changelog has up to it", cp, len(got), len(want))
	}

	next, err := n.restoreFromLog(context.Background(), ts, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if next != records {
		t.Fatalf("the second restore reached %d, want %d", next, records)
	}
	if got, want := contents(ts.st), upTo(records); !maps.Equal(got, want) {
		t.Fatalf("after the second restore the store holds %d keys, want the changelog's %d", len(got), len(want))
	}
	if cp, err := ts.st.Checkpoint(); err != nil || cp != records {
		t.Fatalf("checkpoint %d, %v after the second restore, want %d", cp, err, records)
	}
}

// goroutines returns the stacks of all goroutines.
func goroutines() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
