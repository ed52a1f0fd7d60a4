package host

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// TestRestoreInputTimesOutOfRange: a saved input time outside the valid
// event-time range (saved before times were checked, or damaged) is left
// out when a task gives its windows their input times back, as the host
// does (byInputs, and joins), instead of failing the task at every start;
// the other inputs get theirs.
func TestRestoreInputTimesOutOfRange(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "agg", 0)
	if err := saveInputTimes(st, map[int32]int64{0: math.MaxInt64, 1: 5000, 2: math.MinInt64}); err != nil {
		t.Fatal(err)
	}
	w, err := windowing.New(windowing.Config{Window: windowing.Tumbling(time.Second)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out windowing.Output
	if err := restoreInputTimes(st, func(int32) bool { return true }, func(k []byte, err error) error { return err },
		func(in int32, at int64) error { return skipBadTime(w.Progress(in, at, &out)) }); err != nil {
		t.Fatal(err)
	}
	if got := w.InputTimes(); len(got) != 1 || got[1] != 5000 {
		t.Fatalf("input times %v, want only 1: 5000", got)
	}
	if err := skipBadTime(errStoreTest); err != errStoreTest {
		t.Fatalf("skipBadTime dropped %v", errStoreTest)
	}
}

var errStoreTest = errors.New("store failed")

// TestRestoreWindowOutOfRange: a window store holding a window that no
// valid event time makes — a sliding pane at the end of int64, [MaxInt64,
// MinInt64), as stored before times were range-checked, or a forged
// hopping pane there, on which the restore looped forever — is restored
// without it: the entry is deleted, the valid one restored.
func TestRestoreWindowOutOfRange(t *testing.T) {
	const top = math.MaxInt64 / 2000 * 2000 // the last 2 s pane start
	for _, tc := range []struct {
		name      string
		spec      windowing.Spec
		bad, good windowing.Window
	}{
		{"sliding", windowing.Sliding(time.Second), windowing.Window{Start: math.MaxInt64, End: math.MinInt64}, windowing.Window{Start: 5000, End: 5001}},
		{"hopping", windowing.Hopping(10*time.Second, 2*time.Second), windowing.Window{Start: top, End: top + 2000 - 1<<64}, // the end wrapped around, as before the range check
			windowing.Window{Start: 4000, End: 6000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := state.Open("", state.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			st := db.Store("p", "agg", 0)
			bad, good := accKey([]byte("k"), tc.bad), accKey([]byte("k"), tc.good)
			for _, k := range [][]byte{bad, good} {
				if err := st.Put(k, []byte("acc")); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Commit(1); err != nil {
				t.Fatal(err)
			}
			a, err := newAggregator(windowing.Config{Window: tc.spec, Grace: time.Hour}, st, nativeStats{}, "stats", 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.discarded != 1 || a.w.Stats().Open == 0 {
				t.Fatalf("discarded %d, open %d: want the bad window dropped and the good one restored", a.discarded, a.w.Stats().Open)
			}
			if _, ok, _ := st.Get(bad); ok {
				t.Fatal("the window outside the range is still in the store")
			}
			if _, ok, _ := st.Get(good); !ok {
				t.Fatal("the valid window is gone")
			}
		})
	}
}
