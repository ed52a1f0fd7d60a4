package windowing

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// TestImports keeps the package pure: the standard library and abi only.
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.Split(p, "/")[0], ".") && p != "github.com/eddy-streams/eddy/abi" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

// TestExpiry checks that the store's key count returns to zero once the
// watermark passes, without Flush.
func TestExpiry(t *testing.T) {
	store := newSumStore()
	w, err := New(Config{Window: Hopping(100*time.Millisecond, 50*time.Millisecond), Grace: 10 * time.Millisecond}, store)
	if err != nil {
		t.Fatal(err)
	}
	var out Output
	peak := 0
	for i := range 10000 {
		rec := abi.Record{Key: []byte(strconv.Itoa(i % 50)), Value: []byte("1"), Timestamp: int64(i / 10)}
		if err := w.Process(0, &rec, &out); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, len(store.m))
		out.Reset()
	}
	rec := abi.Record{Key: []byte("x"), Timestamp: 10_000}
	if err := w.Process(0, &rec, &out); err != nil {
		t.Fatal(err)
	}
	// x has state in two windows, which share its one pane.
	if n := len(store.m); n != 1 || w.Stats().Open != 2 {
		t.Fatalf("store %d keys, open %d after the watermark passed (peak %d)", n, w.Stats().Open, peak)
	}
	if peak > 3*50 {
		t.Fatalf("peak %d accumulators for 50 keys", peak)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no window", Config{}},
		{"zero size", Config{Window: Tumbling(0)}},
		{"advance > size", Config{Window: Hopping(time.Second, 2*time.Second)}},
		{"sub-ms", Config{Window: Tumbling(time.Microsecond)}},
		{"zone not days", Config{Window: Tumbling(time.Hour).In(time.UTC)}},
		{"zone on session", Config{Window: Session(time.Hour).In(time.UTC)}},
		{"negative grace", Config{Window: Tumbling(time.Second), Grace: -time.Second}},
		{"count 0", Config{Window: GlobalCount(0)}},
		{"emit", Config{Window: Tumbling(time.Second), Emit: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg, newSumStore()); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

// Example counts records per key in tumbling one-minute windows.
func Example() {
	store := newSumStore() // the caller's accumulators (Badger + Wasm in Eddy)
	w, err := New(Config{Window: Tumbling(time.Minute), Disorder: 10 * time.Second}, store)
	if err != nil {
		panic(err)
	}
	var out Output
	for _, r := range []abi.Record{
		{Key: []byte("alice"), Value: []byte("1"), Timestamp: 5_000},
		{Key: []byte("alice"), Value: []byte("1"), Timestamp: 61_000},
		{Key: []byte("alice"), Value: []byte("1"), Timestamp: 55_000}, // out of order, within 10 s
		{Key: []byte("alice"), Value: []byte("1"), Timestamp: 75_000}, // watermark 65 s closes [0,60s)
		{Key: []byte("alice"), Value: []byte("1"), Timestamp: 30_000}, // late
	} {
		if err := w.Process(0, &r, &out); err != nil {
			panic(err)
		}
	}
	for _, e := range out.Emits {
		fmt.Printf("%s %v %s\n", e.Key, e.Window, e.Value)
	}
	for _, l := range out.Late {
		fmt.Printf("late %s t=%d window %v watermark %d\n", l.Record.Key, l.Time, l.Window, l.Watermark)
	}
	// Output:
	// alice [0,60000) count=2 sum=2
	// late alice t=30000 window [0,60000) watermark 65000
}

// TestProgressReleasesAQuietPartition: a partition without records holds
// the watermark back until Progress reports how far it has got.
func TestProgressReleasesAQuietPartition(t *testing.T) {
	store := countStore{}
	w, err := New(Config{Window: Tumbling(time.Second)}, store)
	if err != nil {
		t.Fatal(err)
	}
	w.Assign(0, 1)
	var out Output
	for ts := int64(0); ts <= 5000; ts += 100 {
		if err := w.Process(0, &abi.Record{Key: []byte("k"), Timestamp: ts}, &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.Emits) != 0 {
		t.Fatalf("partition 1 has not progressed, yet %d windows fired", len(out.Emits))
	}
	if err := w.Progress(1, 3500, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Emits) != 3 || out.Emits[2].Window.End != 3000 || string(out.Emits[0].Value) != "10" {
		t.Fatalf("after progress to 3500: %+v", out.Emits)
	}
	if w.Watermark() != 3500 {
		t.Fatalf("watermark %d, want 3500", w.Watermark())
	}
}
