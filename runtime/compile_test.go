package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/runtime"
)

// Hostile modules are generated here rather than committed: a function
// () -> () whose body is code.
func leb(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func section(id byte, body []byte) []byte {
	return append(leb([]byte{id}, uint32(len(body))), body...)
}

func oneFunction(code []byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, section(1, []byte{1, 0x60, 0, 0})...)
	b = append(b, section(3, []byte{1, 0})...)
	body := append(append([]byte{0}, code...), 0x0b) // no locals
	return append(b, section(10, append(leb([]byte{1}, uint32(len(body))), body...))...)
}

// nested is d blocks inside one another.
func nested(d int) []byte {
	c := make([]byte, 0, 3*d)
	for range d {
		c = append(c, 0x02, 0x40)
	}
	for range d {
		c = append(c, 0x0b)
	}
	return c
}

// brTable is a br_table of n labels (all 0) on a constant.
func brTable(n int) []byte {
	c := leb([]byte{0x02, 0x40, 0x41, 0x00, 0x0e}, uint32(n))
	for range n + 1 {
		c = append(c, 0)
	}
	return append(c, 0x0b)
}

// TestLoadBoundsCompileWork: modules whose compile would take wazero long
// are refused before compiling, naming the bound; a module over the size
// bound is refused before anything.
func TestLoadBoundsCompileWork(t *testing.T) {
	e := newEngine(t, runtime.WithoutCache())
	for _, tc := range []struct {
		name string
		wasm []byte
		opts []runtime.Option
		want string
	}{
		// 40,000 nested blocks: 120 KB, about 17 s of compiling.
		{"deep nesting", oneFunction(nested(40_000)), nil, "blocks nested deeper than 10000"},
		{"big br_table", oneFunction(brTable(100_000)), nil, "br_table of 100000 labels, more than 65520"},
		{"big module", oneFunction(nested(10)), []runtime.Option{runtime.WithMaxModuleSize(32)}, "module of 54 bytes, more than 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Load(context.Background(), tc.name, tc.wasm, tc.opts...)
			if !errors.Is(err, runtime.ErrModuleLimit) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrModuleLimit: %s", err, tc.want)
			}
		})
	}
}

// TestCompileIsAbandoned: a compile that takes long (a module within the
// code bounds, loaded uninterruptible so that nothing checks it first: 20,000
// nested blocks, seconds of compiling) ends Load at the compile timeout, or
// when Load's context is done, instead of holding it until the compile ends.
func TestCompileIsAbandoned(t *testing.T) {
	e := newEngine(t, runtime.WithoutCache())
	slow := oneFunction(nested(20_000))
	_, err := e.Load(context.Background(), "slow", slow, runtime.WithUninterruptible(), runtime.WithCompileTimeout(10*time.Millisecond))
	if !errors.Is(err, runtime.ErrCompileTimeout) || !strings.Contains(err.Error(), "not compiled within 10ms") {
		t.Fatalf("err = %v, want ErrCompileTimeout", err)
	}
	// A client that went away, or a SIGTERM, while the module compiles.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Load(ctx, "slow", slow, runtime.WithUninterruptible())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
