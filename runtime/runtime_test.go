package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

func fixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cacheDir is shared by the package's tests so each module compiles once.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "eddy-runtime-cache")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func newEngine(t testing.TB, opts ...runtime.Option) *runtime.Engine {
	t.Helper()
	e, err := runtime.NewEngine(append([]runtime.Option{runtime.WithCacheDir(cacheDir)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func load(t testing.TB, e *runtime.Engine, path string, opts ...runtime.Option) *runtime.Function {
	t.Helper()
	f, err := e.Load(context.Background(), filepath.Base(path), fixture(t, path), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(context.Background()) })
	return f
}

func records(n int) []abi.Record {
	recs := make([]abi.Record, n)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte{byte(i)}, Value: []byte("value"), Timestamp: int64(i)}
	}
	return recs
}

func TestLoadRefusesBadModules(t *testing.T) {
	e := newEngine(t)
	garbage := append([]byte("\x00asm\x01\x00\x00\x00"), 0xff, 0xff, 0xff)
	tests := []struct {
		name    string
		wasm    []byte
		want    error
		message string
	}{
		{"not wasm", fixture(t, "notwasm.wasm"), runtime.ErrNotWasm, `starts with "this is "`},
		{"empty file", nil, runtime.ErrNotWasm, "Wasm magic"},
		{"corrupt module", garbage, runtime.ErrInvalidModule, "invalid WebAssembly module"},
		{"wrong ABI version", fixture(t, "wat/abiv2.wasm"), runtime.ErrABIVersion, "speaks ABI v2; this host supports v1"},
		{"missing export", fixture(t, "wat/missing.wasm"), runtime.ErrMissingExport, `manifest names kind process: missing or mistyped export: no export "eddy_process"`},
		{"unknown import", fixture(t, "wat/badimport.wasm"), runtime.ErrImport, "env.open_socket"},
		// A function whose body is the unassigned opcode 0xd3, then end.
		{"unknown opcode", []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00\x0a\x05\x01\x03\x00\xd3\x0b"),
			runtime.ErrInvalidModule, "adding interrupt checks: offset 0x17: unsupported: function 0: unknown opcode 0xd3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := e.Load(context.Background(), "bad", tc.wasm)
			if err == nil {
				f.Close(context.Background())
				t.Fatal("loaded a bad module")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %q does not wrap %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %q does not say %q", err, tc.message)
			}
		})
	}
}

func TestDropAllBatchSizes(t *testing.T) {
	f := load(t, newEngine(t), "wat/dropall.wasm")
	if got := f.Manifest().Kinds; len(got) != 1 || got[0] != abi.KindProcess {
		t.Fatalf("kinds %v", got)
	}
	var out runtime.Output
	for _, n := range []int{0, 1, 15, 16, 1000, 70000} {
		out.Reset()
		if err := f.Process(context.Background(), records(n), &out); err != nil {
			t.Fatalf("batch of %d: %v", n, err)
		}
		if len(out.Records) != 0 || len(out.Failed) != 0 {
			t.Fatalf("batch of %d: %d records, %d failed", n, len(out.Records), len(out.Failed))
		}
	}
}

// TestHostileGuests checks that each hostile module fails every record with a
// specific cause, that the instance is rebuilt, and that it keeps working
// (failing the same way) on the next call instead of hanging or panicking.
func TestHostileGuests(t *testing.T) {
	e := newEngine(t, runtime.WithCallTimeout(200*time.Millisecond), runtime.WithMemoryLimit(4<<20))
	tests := []struct {
		fixture string
		want    error
		reason  string
	}{
		{"wat/trap.wasm", runtime.ErrTrap, "unreachable"},
		{"wat/loop.wasm", runtime.ErrTimeout, "did not finish within 200ms"},
		{"wat/oom.wasm", runtime.ErrOOM, "memory at 4194304 of 4194304 bytes"},
		{"wat/malformed.wasm", runtime.ErrMalformed, "malformed output"},
		{"wat/outofbounds.wasm", runtime.ErrMalformed, "beyond memory of 131072 bytes"},
		{"wat/negative.wasm", runtime.ErrFailed, "deliberate failure"},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			f := load(t, e, tc.fixture)
			inst, err := f.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Release(context.Background(), inst)
			for round := 0; round < 2; round++ {
				var out runtime.Output
				in := records(3)
				if err := inst.Process(context.Background(), in, &out); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if len(out.Failed) != len(in) {
					t.Fatalf("round %d: %d failed, want %d", round, len(out.Failed), len(in))
				}
				for i, fe := range out.Failed {
					if fe.Index != i || !errors.Is(fe, tc.want) || fe.Function != filepath.Base(tc.fixture) || fe.Kind != abi.KindProcess {
						t.Fatalf("round %d: failure %d = %+v, want index %d and %v", round, i, fe, i, tc.want)
					}
					if !strings.Contains(fe.Error(), tc.reason) {
						t.Fatalf("failure %q does not say %q", fe.Error(), tc.reason)
					}
				}
			}
			if inst.Rebuilds() < 2 {
				t.Fatalf("instance rebuilt %d times, want at least 2", inst.Rebuilds())
			}
		})
	}
	// The engine still loads and runs a good function afterwards.
	f := load(t, e, "wat/dropall.wasm")
	var out runtime.Output
	if err := f.Process(context.Background(), records(10), &out); err != nil || len(out.Failed) != 0 {
		t.Fatalf("good function after hostile ones: %v %v", err, out.Failed)
	}
}

func TestCancelledContextIsNotARecordFailure(t *testing.T) {
	f := load(t, newEngine(t, runtime.WithCallTimeout(10*time.Second)), "wat/loop.wasm")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var out runtime.Output
	err := f.Process(ctx, records(4), &out)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if len(out.Failed) != 0 {
		t.Fatalf("records blamed for a cancelled context: %v", out.Failed)
	}
}

func TestInfo(t *testing.T) {
	f := load(t, newEngine(t), "wat/negative.wasm")
	info := f.Info()
	if len(info.Digest) != 64 || info.ABIVersion != 1 || info.MemoryMin != 2 || info.MemoryLimit != runtime.DefaultMemoryLimit {
		t.Fatalf("info %+v", info)
	}
	if len(info.Imports) != 1 || info.Imports[0] != "eddy.error" {
		t.Fatalf("imports %v", info.Imports)
	}
}

func TestUninterruptibleStillRuns(t *testing.T) {
	f := load(t, newEngine(t), "wat/dropall.wasm", runtime.WithUninterruptible())
	var out runtime.Output
	if err := f.Process(context.Background(), records(5), &out); err != nil || len(out.Failed) != 0 {
		t.Fatalf("%v %v", err, out.Failed)
	}
}
