package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// counts returns the values of out's records, in order.
func counts(out *runtime.Output) []string {
	var got []string
	for _, r := range out.Records {
		got = append(got, string(r.Value))
	}
	return got
}

// TestStateWritesOfFailedCallsAreDropped runs guests/go/trapcount, a counter
// that traps on the value "trap" after writing its count: the batch is
// bisected and its halves re-run, and the calls that failed must leave no
// writes behind (ABI.md section 3), else every re-run counts again.
func TestStateWritesOfFailedCallsAreDropped(t *testing.T) {
	ctx := context.Background()
	f := load(t, newEngine(t), "go/trapcount.wasm")
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	st := mapState{}
	inst.SetState(st)
	var in []abi.Record
	for _, v := range []string{"a", "a", "trap", "a", "a", "trap", "a"} {
		in = append(in, abi.Record{Key: []byte("k"), Value: []byte(v)})
	}
	var out runtime.Output
	if err := inst.Process(ctx, in, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := counts(&out), []string{"1", "2", "3", "4", "5"}; !equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if len(out.Failed) != 2 || out.Failed[0].Index != 2 || out.Failed[1].Index != 5 || !errors.Is(out.Failed[0], runtime.ErrTrap) {
		t.Errorf("failed %v, want records 2 and 5 (traps)", out.Failed)
	}
	if string(st["k"]) != "5" {
		t.Errorf("stored count %q, want 5", st["k"])
	}
}

// TestStatePutLimits gives the counter a key over abi.MaxStateKey: that
// record fails with cause state_limit and says why, with the sizes and not
// the key; the others count once.
func TestStatePutLimits(t *testing.T) {
	ctx := context.Background()
	f := load(t, newEngine(t), "go/counter.wasm")
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	st := mapState{}
	inst.SetState(st)
	big := bytes.Repeat([]byte{'k'}, 100_000)
	in := []abi.Record{{Key: []byte("a")}, {Key: big}, {Key: []byte("a")}, {Key: bytes.Repeat([]byte{'k'}, abi.MaxStateKey)}}
	var out runtime.Output
	if err := inst.Process(ctx, in, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := counts(&out), []string{"1", "2", "1"}; !equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if len(out.Failed) != 1 || out.Failed[0].Index != 1 || !errors.Is(out.Failed[0], runtime.ErrStateLimit) ||
		out.Failed[0].CodeString() != "state_limit" {
		t.Fatalf("failed %v, want record 1 with cause state_limit", out.Failed)
	}
	msg := out.Failed[0].Error()
	if !strings.Contains(msg, "state_put: key of 100000 bytes is over the limit of 16384 bytes") || len(msg) > 300 {
		t.Errorf("reason %q: want the sizes, briefly", msg)
	}
	if len(st) != 2 || st[string(big)] != nil {
		t.Errorf("store holds %d keys, want a and the 16 KiB one", len(st))
	}
}

// TestNativeStateWrites: a native's record that panics (its trap) or breaks
// the limits leaves no writes; one refused by its error keeps them, as a
// guest's item error does.
func TestNativeStateWrites(t *testing.T) {
	ctx := context.Background()
	f := loadNative(t, newEngine(t), "count", func() runtime.Native {
		return runtime.Native{ProcessState: func(st runtime.State, r *abi.Record, emit func(abi.Record)) error {
			key := r.Key
			if string(r.Value) == "big" {
				key = bytes.Repeat([]byte{'k'}, abi.MaxStateKey+1)
			}
			v, _, err := st.Get([]byte("n"))
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(string(v))
			if err := st.Put([]byte("n"), strconv.AppendInt(nil, int64(n+1), 10)); err != nil {
				return err
			}
			if err := st.Put(key, []byte("x")); err != nil {
				return err
			}
			switch string(r.Value) {
			case "panic":
				panic("boom")
			case "refuse":
				return errors.New("refused")
			}
			emit(abi.Record{Value: strconv.AppendInt(nil, int64(n+1), 10)})
			return nil
		}}
	})
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	st := mapState{}
	inst.SetState(st)
	var in []abi.Record
	for _, v := range []string{"a", "panic", "a", "big", "refuse", "a"} {
		in = append(in, abi.Record{Key: []byte("k"), Value: []byte(v)})
	}
	var out runtime.Output
	if err := inst.Process(ctx, in, &out); err != nil {
		t.Fatal(err)
	}
	// The refused record counted (3); the panic and the big key did not.
	if got, want := counts(&out), []string{"1", "2", "4"}; !equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if len(out.Failed) != 3 || !errors.Is(out.Failed[0], runtime.ErrTrap) || !errors.Is(out.Failed[1], runtime.ErrStateLimit) ||
		!errors.Is(out.Failed[2], runtime.ErrGuest) {
		t.Errorf("failed %v, want a trap, a state limit and a refusal", out.Failed)
	}
	if string(st["n"]) != "4" {
		t.Errorf("stored count %q, want 4", st["n"])
	}
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
