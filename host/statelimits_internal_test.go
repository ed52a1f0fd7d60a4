package host

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// TestBriefKey: a key in a message is cut to 32 bytes and its length.
func TestBriefKey(t *testing.T) {
	if got := brief([]byte("alice")); got != `"alice"` {
		t.Errorf("brief(alice) = %s", got)
	}
	got := brief(bytes.Repeat([]byte{0xff}, 100_000))
	if len(got) > 200 || !strings.HasSuffix(got, "... (100000 bytes)") {
		t.Errorf("brief of a 100,000-byte key: %s", got)
	}
}

// hugeAcc is nativeStats whose accumulator grows past state.MaxValue when
// a group holds the value "3".
type hugeAcc struct{ nativeStats }

func (h hugeAcc) AggAdd(ctx context.Context, groups []abi.Group, out []abi.Added, failed []*runtime.Error) ([]abi.Added, []*runtime.Error, error) {
	base := len(out)
	out, failed, err := h.nativeStats.AggAdd(ctx, groups, out, failed)
	for g, grp := range groups {
		for _, r := range grp.Records {
			if string(r.Value) == "3" {
				out[base+g].Acc = make([]byte, state.MaxValue+1)
			}
		}
	}
	return out, failed, err
}

// TestAccumulatorOverTheLimit: the records folded into an accumulator the
// store cannot take fail with state_limit, and the window keeps the
// accumulator it had.
func TestAccumulatorOverTheLimit(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "agg", 0)
	a, err := newAggregator(windowing.Config{Window: windowing.Tumbling(time.Second)}, st, hugeAcc{}, "stats", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed, emits []string
	for _, batch := range [][]abi.Record{
		{{Key: []byte("a"), Value: []byte("1"), Timestamp: 100}},
		{{Key: []byte("a"), Value: []byte("3"), Timestamp: 110}, {Key: []byte("a"), Value: []byte("2"), Timestamp: 120}},
		{{Key: []byte("c"), Value: []byte("5"), Timestamp: 5000}}, // closes [0, 1000)
	} {
		var out aggOutput
		if err := a.process(context.Background(), batch, &out); err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Failed {
			failed = append(failed, fmt.Sprintf("%d %s", e.Index, e.CodeString()))
			if !strings.Contains(e.Error(), "accumulator of 983041 bytes is over the limit of 983040 bytes") {
				t.Errorf("failure %v: want the accumulator's size", e)
			}
		}
		for _, e := range out.Emits {
			emits = append(emits, string(e.Key)+" "+string(e.Value))
		}
		if err := st.Commit(1); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	if want := []string{"0 state_limit", "1 state_limit"}; !slices.Equal(failed, want) {
		t.Errorf("failed %q, want %q", failed, want)
	}
	if want := []string{`a {"count":1,"sum":1,"avg":1}`}; !slices.Equal(emits, want) {
		t.Errorf("emits %q, want %q", emits, want)
	}
}

// hugeMerge is nativeStats whose merges answer more than state.MaxValue.
type hugeMerge struct{ nativeStats }

func (hugeMerge) AggMerge(_ context.Context, keys, _, _ [][]byte, out []runtime.Result) ([]runtime.Result, error) {
	for range keys {
		out = append(out, runtime.Result{Bytes: make([]byte, state.MaxValue+1)})
	}
	return out, nil
}

// TestMergedAccumulatorOverTheLimit: a record that bridges two sessions
// into one whose merged accumulator the store cannot take fails with
// state_limit, and the sessions stay apart.
func TestMergedAccumulatorOverTheLimit(t *testing.T) {
	db, err := state.Open("", state.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "agg", 0)
	a, err := newAggregator(windowing.Config{Window: windowing.Session(time.Second), Disorder: 5 * time.Second}, st, hugeMerge{}, "stats", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed, emits []string
	for _, batch := range [][]abi.Record{
		{{Key: []byte("a"), Value: []byte("1"), Timestamp: 100}, {Key: []byte("a"), Value: []byte("2"), Timestamp: 1800}},
		{{Key: []byte("a"), Value: []byte("4"), Timestamp: 1000}},  // bridges them
		{{Key: []byte("c"), Value: []byte("5"), Timestamp: 20000}}, // closes them
	} {
		var out aggOutput
		if err := a.process(context.Background(), batch, &out); err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Failed {
			failed = append(failed, fmt.Sprintf("%d %s", e.Index, e.CodeString()))
		}
		for _, e := range out.Emits {
			emits = append(emits, string(e.Key)+" "+string(e.Value))
		}
		if err := st.Commit(1); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	if want := []string{"0 state_limit"}; !slices.Equal(failed, want) {
		t.Errorf("failed %q, want %q", failed, want)
	}
	if want := []string{`a {"count":1,"sum":1,"avg":1}`, `a {"count":1,"sum":2,"avg":2}`}; !slices.Equal(emits, want) {
		t.Errorf("emits %q, want %q", emits, want)
	}
}
