package interrupt

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// bulkModule is a module exporting "f", which runs op (the bytes of a bulk
// memory instruction taking (dst, src or value, n) with n = 1 MiB) ten times
// in a loop, over a memory of 32 pages.
func bulkModule(op []byte) []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	code := []byte{0x01, 0x01, 0x7f, // one i32 local
		0x03, 0x40, // loop
		0x41, 0x00, 0x41, 0x00, 0x41, 0x80, 0x80, 0xc0, 0x00} // i32.const 0, 0, 1048576
	code = append(code, op...)
	code = append(code, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x22, 0x00, // local.tee 0 (i + 1)
		0x41, 0x0a, 0x49, 0x0d, 0x00, // br_if 0 (i < 10)
		0x0b, 0x0b)
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, sec(1, 0x01, 0x60, 0x00, 0x00)...)
	b = append(b, sec(3, 0x01, 0x00)...)
	b = append(b, sec(5, 0x01, 0x00, 0x20)...)
	b = append(b, sec(7, 0x01, 0x01, 'f', 0x00, 0x00)...)
	return append(b, sec(10, append([]byte{0x01, byte(len(code))}, code...)...)...)
}

// TestBulkMemoryTakesFuel: memory.fill and memory.copy take a unit of fuel
// per KiB, on top of the loop's check, so that a loop of big bulk
// operations returns to Go as often as a loop of small steps.
func TestBulkMemoryTakesFuel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		op   []byte
	}{
		{"memory.fill", []byte{0xfc, 0x0b, 0x00}},
		{"memory.copy", []byte{0xfc, 0x0a, 0x00, 0x00}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Instrument(bulkModule(tc.op))
			if err != nil {
				t.Fatal(err)
			}
			if m.Bulk != 1 || m.Loops != 1 {
				t.Fatalf("%d bulk instructions and %d loops charged, want 1 and 1", m.Bulk, m.Loops)
			}
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
			defer rt.Close(ctx)
			mod, err := rt.Instantiate(ctx, m.Wasm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mod.ExportedFunction("f").Call(ctx); err != nil {
				t.Fatal(err)
			}
			fuel := int32(api.DecodeI32(mod.ExportedGlobal(FuelExport).Get()))
			// Ten iterations: ten loop checks and ten charges of 1024.
			if want := int32(Fuel - 10 - 10*1024); fuel != want {
				t.Fatalf("fuel %d after ten iterations, want %d", fuel, want)
			}
		})
	}
}
