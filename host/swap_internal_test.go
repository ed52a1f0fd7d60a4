package host

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/eddy-streams/eddy/runtime"
)

// A task made while a swap retires the version it read (an assignment
// racing a deploy) must not instantiate a function the swap closed: the
// current version is read and claimed at once, and a late claim of a
// closed version is refused with errRetiredFn instead of the engine's
// "already closed".
func TestInstanceOfRetiredVersion(t *testing.T) {
	ctx := context.Background()
	eng, err := runtime.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	wasm, err := os.ReadFile("testdata/amplify.wasm")
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{p: &Pipeline{Steps: []Step{{Name: "amplify"}}}}
	load := func(v int) *liveFn {
		fn, err := eng.Load(ctx, "amplify", wasm)
		if err != nil {
			t.Fatal(err)
		}
		return n.newLiveFn(fn, v, versionConfig{})
	}
	old, next := load(0), load(1)
	defer next.fn.Close(ctx)
	n.cur = []*liveFn{old}

	lf, inst, err := n.currentInstance(ctx, 0)
	if err != nil || lf != old {
		t.Fatalf("currentInstance: %v, %v", lf, err)
	}
	// The swap: old is retired while the instance above uses it.
	n.fnMu.Lock()
	old.retired = true
	n.cur[0] = next
	n.fnMu.Unlock()
	n.release(ctx, old, inst) // the last user: old's function is closed

	if _, err := n.newInstance(ctx, old); !errors.Is(err, errRetiredFn) {
		t.Fatalf("instance of a retired, closed version: got %v, want errRetiredFn", err)
	}
	lf, inst, err = n.currentInstance(ctx, 0)
	if err != nil || lf != next {
		t.Fatalf("currentInstance after the swap: %v, %v", lf, err)
	}
	n.release(ctx, lf, inst)
	if next.users != 0 {
		t.Fatalf("users of the current version after its release: %d", next.users)
	}
}
