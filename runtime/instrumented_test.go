package runtime_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/runtime"
)

// TestInstrumentedModulesAreCached loads a module with a disk cache, then
// again in a new engine on the same directory: the rewritten module is kept
// beside the compiled code and used, and a module from the cache is still
// interrupted at its deadline.
func TestInstrumentedModulesAreCached(t *testing.T) {
	dir := t.TempDir()
	wasm := append(fixture(t, "wat/loop.wasm"), customSection(200<<10)...) // large enough to be kept on disk
	load := func() *runtime.Function {
		e, err := runtime.NewEngine(runtime.WithCacheDir(dir), runtime.WithCallTimeout(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		f, err := e.Load(context.Background(), "loop", wasm)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	load()
	files, _ := filepath.Glob(filepath.Join(dir, "eddy-instrumented", "*-v*.wasm"))
	if len(files) != 1 {
		t.Fatalf("%d rewritten modules in the cache, want 1: %v", len(files), files)
	}
	// The second engine uses the cached copy: mark it, so that a rewrite
	// from scratch would be seen (the file is rewritten only when absent).
	info, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(files[0], old, old); err != nil {
		t.Fatal(err)
	}
	f := load()
	info2, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !info2.ModTime().Equal(old) || info2.Size() != info.Size() {
		t.Fatalf("the cached rewrite was written again (mtime %v, size %d → %d)", info2.ModTime(), info.Size(), info2.Size())
	}
	// The module loaded from the cache is still stopped at its deadline.
	var out runtime.Output
	if err := f.Process(context.Background(), records(1), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) != 1 || !errors.Is(out.Failed[0], runtime.ErrTimeout) {
		t.Fatalf("the endless loop from the cached rewrite: failures %v, want a timeout", out.Failed)
	}
}

// customSection returns a Wasm custom section of about n bytes, which any
// module may carry after its other sections.
func customSection(n int) []byte {
	name := "padding"
	body := append(binary.AppendUvarint(nil, uint64(len(name))), name...)
	body = append(body, make([]byte, n)...)
	return append(binary.AppendUvarint([]byte{0}, uint64(len(body))), body...)
}
