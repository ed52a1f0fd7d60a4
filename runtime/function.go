package runtime

import (
	"context"
	"maps"
	"sort"
	"sync"

	"github.com/tetratelabs/wazero"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime/internal/interrupt"
)

// Function is a compiled, validated guest module (Engine.Load), or a Native
// (Engine.LoadNative), and a bounded pool of its instances. Each instance is
// used by one goroutine at a time; the pool keeps idle ones for reuse.
//
// A Function is safe for concurrent use. Close it when done: it closes its
// pooled instances and the wazero runtime that owns them.
type Function struct {
	name     string
	digest   string
	size     int
	cfg      config
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	manifest abi.Manifest
	imports  []string
	limiter  *limiter
	pool     chan *Instance

	// wd stops calls at their deadline; nil for an uninterruptible or
	// native function, whose module has no interrupt flag.
	wd *watchdog
	// startExport: the module had a start section, which Load turned into
	// the export interrupt.StartExport, called after instantiation.
	startExport bool

	countersMu      sync.Mutex
	counters        map[string]int64 // also with WithCounters: it bounds the names
	countersDropped int64            // adds refused by the bounds (host.go)

	newNative func() Native // non-nil for a native function (LoadNative)
}

// Info describes a loaded function. For a native function (LoadNative),
// Digest is NativeDigestPrefix + its name, Exports are the ABI exports of its
// kinds, and Size, Imports and the memory figures are zero.
type Info struct {
	Name        string
	Digest      string // sha256 of the module bytes, hex
	Size        int    // bytes
	ABIVersion  int
	Manifest    abi.Manifest
	Imports     []string // "module.name", sorted
	Exports     []string // function exports, sorted
	MemoryMin   uint32   // pages the module asks for at start
	MemoryMax   uint32   // pages the module declares as maximum (0: none)
	MemoryLimit int      // bytes the host allows per instance
}

// IsNative reports whether f runs a Native (LoadNative) rather than a guest
// module.
func (f *Function) IsNative() bool { return f.newNative != nil }

// Name returns the function's name.
func (f *Function) Name() string { return f.name }

// Digest returns the sha256 of the module, hex encoded, or for a native
// function NativeDigestPrefix + its manifest name.
func (f *Function) Digest() string { return f.digest }

// Manifest returns the module's manifest.
func (f *Function) Manifest() abi.Manifest { return f.manifest }

// Info describes the function.
func (f *Function) Info() Info {
	info := Info{
		Name: f.name, Digest: f.digest, Size: f.size, ABIVersion: f.manifest.ABI,
		Manifest: f.manifest, Imports: f.imports, MemoryLimit: f.cfg.memoryLimit / pageSize * pageSize,
	}
	if f.IsNative() {
		info.MemoryLimit = 0
		for _, k := range f.manifest.Kinds {
			info.Exports = append(info.Exports, k.Exports()...)
		}
		sort.Strings(info.Exports)
		return info
	}
	for name := range f.compiled.ExportedFunctions() {
		if name != interrupt.StartExport || !f.startExport {
			info.Exports = append(info.Exports, name)
		}
	}
	sort.Strings(info.Exports)
	if m, ok := f.compiled.ExportedMemories()[abi.ExportMemory]; ok {
		info.MemoryMin = m.Min()
		if max, ok := m.Max(); ok {
			info.MemoryMax = max
		}
	}
	return info
}

// Counters returns a copy of the counters guests added to. A function keeps
// at most 1000 names of at most 256 bytes; adds to further names are dropped
// (CountersDropped counts them, and the first is logged).
func (f *Function) Counters() map[string]int64 {
	f.countersMu.Lock()
	defer f.countersMu.Unlock()
	return maps.Clone(f.counters)
}

// CountersDropped returns how many counter_add calls were dropped because
// their name was new and over the bounds (see Counters).
func (f *Function) CountersDropped() int64 {
	f.countersMu.Lock()
	defer f.countersMu.Unlock()
	return f.countersDropped
}

// Acquire returns an idle instance from the pool, or a new one.
func (f *Function) Acquire(ctx context.Context) (*Instance, error) {
	select {
	case i := <-f.pool:
		return i, nil
	default:
		return f.NewInstance(ctx)
	}
}

// Release returns an instance to the pool, closing it if the pool is full. Its
// state is detached.
func (f *Function) Release(ctx context.Context, i *Instance) {
	i.state = nil
	select {
	case f.pool <- i:
	default:
		i.Close(ctx)
	}
}

// Process runs a batch through a pooled instance. See Instance.Process.
func (f *Function) Process(ctx context.Context, in []abi.Record, out *Output) error {
	i, err := f.Acquire(ctx)
	if err != nil {
		return err
	}
	defer f.Release(ctx, i)
	return i.Process(ctx, in, out)
}

// Close closes pooled instances and the runtime. Instances acquired and not
// released are closed with it and must not be used afterwards.
func (f *Function) Close(ctx context.Context) error {
	for {
		select {
		case i := <-f.pool:
			i.Close(ctx)
		default:
			if f.rt == nil {
				return nil // a native function
			}
			if f.wd != nil {
				f.wd.removeFunction(f)
			}
			return f.rt.Close(ctx)
		}
	}
}
