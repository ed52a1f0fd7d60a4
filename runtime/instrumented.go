package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/eddy-streams/eddy/runtime/internal/interrupt"
)

// instrumentedCache keeps modules with their interrupt checks added
// (interrupt.Instrument), in memory and, beside the compilation cache, on
// disk: adding them to a large module costs as much as reading its compiled
// code back (9 ms for a 2.8 MB Go module), and every load of a module, at
// start, deploy, rollback or shadow, needed them again. A file is named by
// the digest of the module as given and interrupt.Version, so a new way of
// instrumenting never meets an old file. Like the compiled code next to it,
// the directory is trusted: whoever can write it can run code in the node.
type instrumentedCache struct {
	dir string // "" without a disk cache
	mu  sync.Mutex
	mem map[string]*interrupt.Module // by digest; bounded by memEntries
}

// diskMin is the size below which a module is instrumented again rather
// than read back: under it, opening a file costs more than the rewrite.
const diskMin = 128 << 10

// memEntries bounds the modules kept in memory (a node holds a few versions
// of each step's function at most).
const memEntries = 64

// get returns wasm (whose sha256 is digest) instrumented.
func (c *instrumentedCache) get(digest string, wasm []byte) (*interrupt.Module, error) {
	c.mu.Lock()
	m := c.mem[digest]
	c.mu.Unlock()
	if m != nil {
		return m, nil
	}
	path := ""
	if c.dir != "" && len(wasm) >= diskMin {
		path = filepath.Join(c.dir, digest+"-v"+strconv.Itoa(interrupt.Version)+".wasm")
		if b, err := os.ReadFile(path); err == nil && len(b) > 1 && b[0] <= 1 {
			m = &interrupt.Module{Wasm: b[1:], Start: b[0] == 1}
		}
	}
	if m == nil {
		var err error
		if m, err = interrupt.Instrument(wasm); err != nil {
			return nil, err
		}
		if path != "" {
			// A failure to write only costs the next load the work again.
			_ = writeAtomic(path, append([]byte{boolByte(m.Start)}, m.Wasm...))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem == nil || len(c.mem) >= memEntries {
		c.mem = map[string]*interrupt.Module{}
	}
	c.mem[digest] = m
	return m, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// writeAtomic writes b to path through a temporary file and a rename, so
// that a reader never sees part of it.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
