package interrupt

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// modules returns every .wasm under the repository's testdata/ (the guests
// in every language and the WAT fixtures, hostile ones included) and this
// package's testdata/.
func modules(t testing.TB) map[string][]byte {
	t.Helper()
	mods := map[string][]byte{}
	for _, root := range []string{"../../../testdata", "testdata"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".wasm") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.HasPrefix(b, []byte("\x00asm")) {
				mods[path] = b
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(mods) < 40 {
		t.Fatalf("found only %d modules", len(mods))
	}
	return mods
}

// allFeatures are wazero's features, experimental ones included, so that
// the fixtures using tail calls, threads or exceptions validate.
const allFeatures = api.CoreFeaturesV2 | experimental.CoreFeaturesThreads | experimental.CoreFeaturesTailCall |
	experimental.CoreFeaturesExtendedConst | experimental.CoreFeaturesExceptionHandling

func newValidator(ctx context.Context, t testing.TB) wazero.Runtime {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(allFeatures))
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// TestInstrumentEveryModule instruments every module in testdata and checks
// that the result validates, exports the flag (and the start function when
// there was one), and that removing the inserted checks gives back the
// original function bodies byte for byte.
func TestInstrumentEveryModule(t *testing.T) {
	ctx := context.Background()
	rt := newValidator(ctx, t)
	for path, wasm := range modules(t) {
		t.Run(path, func(t *testing.T) {
			m, err := Instrument(wasm)
			if err != nil {
				t.Fatal(err)
			}
			// Modules wazero refuses (legacy exceptions) are still walked.
			if orig, err := rt.CompileModule(ctx, wasm); err != nil {
				t.Logf("the original does not validate: %v", err)
			} else {
				compiled, err := rt.CompileModule(ctx, m.Wasm)
				if err != nil {
					t.Fatalf("instrumented module does not validate: %v", err)
				}
				if len(compiled.ExportedFunctions()) != len(orig.ExportedFunctions())+boolInt(m.Start) {
					t.Errorf("%d function exports, want %d", len(compiled.ExportedFunctions()), len(orig.ExportedFunctions())+boolInt(m.Start))
				}
				if _, ok := compiled.ExportedFunctions()[StartExport]; ok != m.Start {
					t.Errorf("start function exported: %v, want %v", ok, m.Start)
				}
			}
			loops := checkBodies(t, wasm, m)
			if loops != m.Loops {
				t.Errorf("%d loop checks found, %d reported", loops, m.Loops)
			}
			t.Logf("%d functions, %d loops, %d → %d bytes", m.Functions, m.Loops, len(wasm), len(m.Wasm))
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// codeBodies returns the function bodies (locals and expression) of a
// module's code section.
func codeBodies(t testing.TB, wasm []byte) [][]byte {
	t.Helper()
	r := &reader{b: wasm, p: 8}
	for r.p < len(wasm) {
		id := r.byte()
		size := int(r.u32())
		if r.err != nil {
			t.Fatal(r.err)
		}
		if id != secCode {
			r.p += size
			continue
		}
		n := r.u32()
		bodies := make([][]byte, n)
		for i := range bodies {
			size := int(r.u32())
			bodies[i] = wasm[r.p : r.p+size]
			r.p += size
		}
		return bodies
	}
	return nil
}

// indexesOf returns the indexes Instrument uses for the original module.
func indexesOf(t testing.TB, wasm []byte) indexes {
	t.Helper()
	l, err := scan(wasm)
	if err != nil {
		t.Fatal(err)
	}
	g, f := l.importedGlobals+l.globals, l.importedFuncs+l.funcs
	return indexes{globals: g, funcs: f, refuelType: l.types, refuel: f, chargeType: l.types + 1, charge: f + 1, flag: g, fuel: g + 1}
}

// checkBodies checks the code of an instrumented module against the
// original: the same bodies once the checks are removed, then $refuel. It
// returns the number of loop checks.
func checkBodies(t testing.TB, wasm []byte, m *Module) int {
	t.Helper()
	ix := indexesOf(t, wasm)
	before, after := codeBodies(t, wasm), codeBodies(t, m.Wasm)
	if len(after) != len(before)+2 {
		t.Fatalf("%d bodies, then %d", len(before), len(after))
	}
	if want := appendRefuel(nil, ix); !bytes.Equal(after[len(before)], want) {
		t.Fatalf("body %d %x, want $refuel %x", len(before), after[len(before)], want)
	}
	if want := appendCharge(nil, ix); !bytes.Equal(after[len(before)+1], want) {
		t.Fatalf("last body %x, want $charge %x", after[len(before)+1], want)
	}
	loops, entries := 0, 0
	for i := range before {
		// The original tells whether the function calls, so whether it
		// must start with a check.
		r := &reader{b: before[i]}
		skipLocals(r)
		_, _, calls, err := walk(r, ix, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		stripped, n := strip(t, after[i], ix, calls)
		loops += n
		if calls {
			entries++
		}
		if !bytes.Equal(stripped, before[i]) {
			t.Fatalf("body %d differs from the original once its checks are removed", i)
		}
	}
	if entries != m.Functions {
		t.Errorf("%d entry checks found, %d reported", entries, m.Functions)
	}
	return loops
}

// strip removes the checks from an instrumented body: the one at its entry
// (if entry) and the one after each loop's block type, failing if one is
// missing.
func strip(t testing.TB, body []byte, ix indexes, entry bool) ([]byte, int) {
	t.Helper()
	check := appendCheck(nil, ix)
	r := &reader{b: body}
	skipLocals(r)
	start := r.p
	if bytes.HasPrefix(body[start:], check) != entry {
		t.Fatalf("check at the function's entry: %v, want %v", !entry, entry)
	}
	// The instrumented code uses the fuel, $refuel and $charge.
	all := ix
	all.globals, all.funcs = ix.globals+2, ix.funcs+2
	loops, bulks, _, err := walk(r, all, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	charge := append([]byte{0x10}, appendU32(nil, ix.charge)...)
	out := append([]byte(nil), body[:start]...)
	last := start
	if entry {
		last += len(check)
	}
	li, bi := 0, 0
	for li < len(loops) || bi < len(bulks) {
		if bi == len(bulks) || (li < len(loops) && loops[li] < bulks[bi]) {
			l := loops[li]
			li++
			if !bytes.HasPrefix(body[l:], check) {
				t.Fatalf("no check after the loop at %#x", l)
			}
			out = append(out, body[last:l]...)
			last = l + len(check)
			continue
		}
		b := bulks[bi]
		bi++
		if b-len(charge) < last || !bytes.Equal(body[b-len(charge):b], charge) {
			t.Fatalf("no call of $charge before the bulk instruction at %#x", b)
		}
		out = append(out, body[last:b-len(charge)]...)
		last = b
	}
	return append(out, body[last:]...), len(loops)
}

// stop sets the flag and takes the fuel, as the host's watchdog does.
func stop(t testing.TB, mod api.Module) {
	t.Helper()
	flag, ok1 := mod.ExportedGlobal(FlagExport).(api.MutableGlobal)
	fuel, ok2 := mod.ExportedGlobal(FuelExport).(api.MutableGlobal)
	if !ok1 || !ok2 {
		t.Fatal("the flag and the fuel are not exported mutable globals")
	}
	flag.Set(1)
	fuel.Set(1)
}

// TestFlagStopsALoop runs the hostile loop fixture's eddy_process, which never
// returns, and sets the flag: the call traps.
func TestFlagStopsALoop(t *testing.T) {
	ctx := context.Background()
	wasm, err := os.ReadFile("../../../testdata/wat/loop.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	mod, err := rt.InstantiateWithConfig(ctx, m.Wasm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("eddy_process").Call(ctx, 0, 0)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the loop returned: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	stop(t, mod)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("err = %v, want an unreachable trap", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not stop")
	}
}

func TestInstrumentRefuses(t *testing.T) {
	module := func(sections ...[]byte) []byte {
		return append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Join(sections, nil)...)
	}
	sec := func(id byte, content ...byte) []byte { return appendSection(nil, id, content) }
	// A module with one function of type () -> () whose body is code
	// (after its locals).
	withLocals := func(code ...byte) []byte {
		body := code
		return module(
			sec(secType, 0x01, 0x60, 0x00, 0x00),
			sec(secFunction, 0x01, 0x00),
			sec(secCode, append([]byte{0x01, byte(len(body))}, body...)...),
		)
	}
	withBody := func(code ...byte) []byte { return withLocals(append([]byte{0x00}, code...)...) }
	tests := []struct {
		name        string
		wasm        []byte
		unsupported bool
		message     string
	}{
		{"no magic", []byte("not wasm"), false, "offset 0x0: not a WebAssembly binary"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), true, "binary format version"},
		{"truncated section", module([]byte{secType, 0x10, 0x01}), false, "runs past the end of the module"},
		{"unknown section", module(sec(14)), true, "unknown section id 14"},
		{"sections out of order", module(sec(secExport, 0x00), sec(secGlobal, 0x00)), false, "section 6 out of order"},
		{"reserved export", module(sec(secExport, append(appendName([]byte{0x01}, FlagExport), 0x00, 0x00)...)), false, `exports "eddy.interrupt"`},
		{"reserved export fuel", module(sec(secExport, append(appendName([]byte{0x01}, FuelExport), 0x00, 0x00)...)), false, `exports "eddy.fuel"`},
		{"GC types", module(sec(secType, 0x01, 0x5f, 0x00)), true, "type form 0x5f"},
		{"vector longer than its section", module(sec(secFunction, 0x05, 0x00)), false, "vector of 5 entries in 1 bytes"},
		{"too many locals", withLocals(0x01, 0x80, 0x80, 0x80, 0x80, 0x01, 0x7f), true, "268435456 locals, more than 50000"},
		{"global out of range", withBody(0x23, 0x00, 0x1a, 0x0b), false, "global 0 out of range (the module has 0)"},
		{"set global out of range", withBody(0x41, 0x00, 0x24, 0x00, 0x0b), false, "global 0 out of range"},
		{"call out of range", withBody(0x10, 0x01, 0x0b), false, "function 1 out of range (the module has 1)"},
		{"memory64", module(sec(secMemory, 0x01, 0x04, 0x01)), true, "memory64"},
		{"two memories", module(sec(secMemory, 0x02, 0x00, 0x01, 0x00, 0x01)), true, "2 memories"},
		{"unknown opcode", withBody(0x01, 0xd3, 0x0b), true, "offset 0x18: unsupported: function 0: unknown opcode 0xd3"},
		{"unknown SIMD opcode", withBody(0xfd, 0x9a, 0x01, 0x0b), true, "unknown opcode 0xfd 154"},
		{"relaxed SIMD", withBody(0xfd, 0x80, 0x02, 0x0b), true, "unknown opcode 0xfd 256"},
		{"unknown 0xfc opcode", withBody(0xfc, 0x12, 0x0b), true, "unknown opcode 0xfc 18"},
		{"unknown atomic opcode", withBody(0xfe, 0x04, 0x0b), true, "unknown opcode 0xfe 4"},
		{"no final end", withBody(0x01), false, "function 0: body ends before its final end"},
		{"code after end", withBody(0x0b, 0x01), false, "1 bytes after the body's final end"},
		{"truncated immediate", withBody(0x41, 0x80), false, "unexpected end in an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Instrument(tc.wasm)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if errors.Is(err, ErrUnsupported) != tc.unsupported {
				t.Errorf("err = %v, unsupported %v", err, !tc.unsupported)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("err = %q, want it to say %q", err, tc.message)
			}
		})
	}
}

// TestInstrumentAddsMissingSections instruments the smallest module, with
// no sections at all.
func TestInstrumentAddsMissingSections(t *testing.T) {
	ctx := context.Background()
	m, err := Instrument([]byte("\x00asm\x01\x00\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x09\x02\x60\x00\x00\x60\x01\x7f\x01\x7f" + // type section: () -> (), (i32) -> (i32)
		"\x03\x03\x02\x00\x01" + // function section: $refuel, $charge
		"\x05\x03\x01\x00\x00" + // memory section: one of 0 pages
		"\x06\x0d\x02\x7f\x01\x41\x00\x0b\x7f\x01\x41\x80\x80\x04\x0b" + // global section: flag, fuel
		"\x07\x1e\x02\x0eeddy.interrupt\x03\x00\x09eddy.fuel\x03\x01" + // export section
		"\x0a\x2e\x02\x13\x00\x41\x00\x40\x00\x1a\x23\x00\x04\x40\x00\x0b\x41\x80\x80\x04\x24\x01\x0b" + // code: $refuel,
		"\x18\x00\x23\x01\x20\x00\x41\x0a\x76\x6b\x24\x01\x23\x01\x41\x01\x48\x04\x40\x10\x00\x0b\x20\x00\x0b") // $charge
	if !bytes.Equal(m.Wasm, want) {
		t.Fatalf("instrumented:\n%x\nwant\n%x", m.Wasm, want)
	}
	rt := newValidator(ctx, t)
	if _, err := rt.CompileModule(ctx, m.Wasm); err != nil {
		t.Fatal(err)
	}
}

// fixture reads a module of this package's testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// envModule exports the global "base" (i32 42) that features.wasm imports.
var envModule = []byte("\x00asm\x01\x00\x00\x00" +
	"\x06\x06\x01\x7f\x00\x41\x2a\x0b" +
	"\x07\x08\x01\x04base\x03\x00")

// TestInstrumentedModulesComputeTheSame runs the fixtures' exports in their
// original and instrumented forms (compiled, with wazero's own termination
// checks off) and compares the answers.
func TestInstrumentedModulesComputeTheSame(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		fixture string
		export  string
		params  []uint64
		want    uint64
	}{
		{"features.wasm", "run", []uint64{0}, 0},
		{"features.wasm", "run", []uint64{1}, 0},
		{"tailcall.wasm", "count", []uint64{100000, 0}, 100000},
		{"tailcall.wasm", "ping", []uint64{1<<32 - 1000}, 0}, // returns when the counter wraps to 0
		{"atomics.wasm", "run", []uint64{1000}, 1000},
		{"exceptions.wasm", "run", []uint64{10}, 55},
	}
	for _, tc := range tests {
		t.Run(tc.fixture+"/"+tc.export, func(t *testing.T) {
			wasm := fixture(t, tc.fixture)
			m, err := Instrument(wasm)
			if err != nil {
				t.Fatal(err)
			}
			var got [2][]uint64
			for i, b := range [][]byte{wasm, m.Wasm} {
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(allFeatures))
				defer rt.Close(ctx)
				if _, err := rt.InstantiateWithConfig(ctx, envModule, wazero.NewModuleConfig().WithName("env")); err != nil {
					t.Fatal(err)
				}
				mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithStartFunctions())
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 && m.Start {
					// What the start section did during instantiation.
					if _, err := mod.ExportedFunction(StartExport).Call(ctx); err != nil {
						t.Fatal(err)
					}
				}
				got[i], err = mod.ExportedFunction(tc.export).Call(ctx, tc.params...)
				if err != nil {
					t.Fatalf("module %d: %v", i, err)
				}
			}
			if got[0][0] != got[1][0] {
				t.Fatalf("original %d, instrumented %d", got[0][0], got[1][0])
			}
			if tc.want != 0 && got[0][0] != tc.want {
				t.Fatalf("got %d, want %d", got[0][0], tc.want)
			}
			t.Logf("%s(%v) = %d", tc.export, tc.params, got[0][0])
		})
	}
}

// TestFlagStopsTailCalls stops two functions that tail-call each other
// forever: no loop, so only the checks at function entry see the flag.
func TestFlagStopsTailCalls(t *testing.T) {
	ctx := context.Background()
	m, err := Instrument(fixture(t, "tailcall.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(allFeatures))
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, m.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("ping").Call(ctx, 1) // never reaches 0
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	stop(t, mod)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("err = %v, want an unreachable trap", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tail calls did not stop")
	}
}

// TestInstrumentDropsCodeOffsetSections drops the custom sections whose
// offsets into the code would be wrong, and keeps the others.
func TestInstrumentDropsCodeOffsetSections(t *testing.T) {
	custom := func(name string) []byte {
		return appendSection(nil, secCustom, append(appendName(nil, name), 1, 2, 3))
	}
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	for _, name := range []string{"name", ".debug_info", "producers", ".debug_line", "metadata.code.branch_hint"} {
		wasm = append(wasm, custom(name)...)
	}
	m, err := Instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for name, keep := range map[string]bool{"name": true, "producers": true, ".debug_info": false, ".debug_line": false, "metadata.code.branch_hint": false} {
		if bytes.Contains(m.Wasm, custom(name)) != keep {
			t.Errorf("section %q kept: %v, want %v", name, !keep, keep)
		}
	}
}

// BenchmarkInstrument rewrites a Go guest (2.8 MB, 1900 functions) and a C
// one: the time it adds to every Load.
func BenchmarkInstrument(b *testing.B) {
	for _, path := range []string{"go/upper.wasm", "c/upper.wasm"} {
		wasm, err := os.ReadFile(filepath.Join("../../../testdata", path))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(path, func(b *testing.B) {
			b.SetBytes(int64(len(wasm)))
			for b.Loop() {
				if _, err := Instrument(wasm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFixturesAreUpToDate rebuilds testdata/*.wasm from their WAT sources
// (testdata/build.sh) and compares, where wat2wasm and binaryen's wasm-opt
// are installed.
func TestFixturesAreUpToDate(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm not installed (apt-get install wabt)")
	}
	if _, err := os.Stat("../../../sdk/assemblyscript/node_modules/.bin/wasm-opt"); err != nil {
		t.Skip("wasm-opt not installed (cd sdk/assemblyscript && npm ci)")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "testdata/build.sh", out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	built, _ := filepath.Glob(filepath.Join(out, "*.wasm"))
	have, _ := filepath.Glob("testdata/*.wasm")
	if len(built) != len(have) {
		t.Errorf("build.sh builds %d modules, testdata holds %d", len(built), len(have))
	}
	for _, b := range built {
		got, _ := os.ReadFile(b)
		want, err := os.ReadFile(filepath.Join("testdata", filepath.Base(b)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from its source build (run testdata/build.sh)", filepath.Base(b))
		}
	}
}
