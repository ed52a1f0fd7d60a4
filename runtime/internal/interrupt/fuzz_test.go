package interrupt

import (
	"errors"
	"testing"
)

// FuzzInstrument mutates small modules (the WAT, C, Rust and AssemblyScript
// fixtures, this package's own) and checks that Instrument never panics,
// fails only with an *Error, and that when it succeeds, removing the checks
// from its output gives back the original function bodies.
//
// It does not compile the mutants with wazero, whose decoder allocates what
// a module's counts ask for before reading the entries (a data segment, an
// element vector or a function type that claims 4 G entries): mutants would
// exhaust memory there. TestInstrumentEveryModule checks validation on the
// fixtures.
func FuzzInstrument(f *testing.F) {
	for _, wasm := range modules(f) {
		if len(wasm) <= 64<<10 {
			f.Add(wasm)
		}
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		m, err := Instrument(wasm)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if e.Offset < 0 || e.Offset > len(wasm) {
				t.Fatalf("error at offset %d of a %d-byte module", e.Offset, len(wasm))
			}
			return
		}
		checkBodies(t, wasm, m)
	})
}
