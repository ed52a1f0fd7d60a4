package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime/internal/interrupt"
)

// Engine compiles guest modules into Functions (Load), and wraps functions
// written in Go as Functions of the same shape (LoadNative). It owns the
// on-disk compilation cache shared by every module it loads.
//
// An Engine is safe for concurrent use. Close it after closing its Functions.
type Engine struct {
	cfg   config
	cache wazero.CompilationCache
	wd    *watchdog // stops the calls of interruptible functions at their deadline
	// instrumented keeps modules with their interrupt checks added, by
	// digest of the module as given (instrumented.go).
	instrumented instrumentedCache
	// compiles counts compiles in flight, abandoned ones included (see
	// compile): the cache they use is closed only after the last ends.
	mu struct {
		sync.Mutex
		compiles int
		closed   bool
	}
}

// NewEngine returns an Engine. With the default options, compiled code is
// cached under the user's cache directory.
func NewEngine(opts ...Option) (*Engine, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, wd: newWatchdog()}
	if !cfg.noCache {
		dir := cfg.cacheDir
		if dir == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				return nil, fmt.Errorf("runtime: compilation cache: %w (use WithCacheDir or WithoutCache)", err)
			}
			dir = filepath.Join(base, "eddy", "wazero")
		}
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return nil, fmt.Errorf("runtime: compilation cache in %s: %w", dir, err)
		}
		e.cache = cache
		e.instrumented.dir = filepath.Join(dir, "eddy-instrumented")
	} else {
		e.cache = wazero.NewCompilationCache()
	}
	return e, nil
}

func (c *config) validate() error {
	switch {
	case c.memoryLimit < pageSize:
		return fmt.Errorf("runtime: memory limit %d bytes is below one 64 KiB page", c.memoryLimit)
	case c.memoryLimit > maxMemoryLimit:
		return fmt.Errorf("runtime: memory limit %d bytes is above the ABI's 2 GiB cap", c.memoryLimit)
	case c.callTimeout <= 0:
		return fmt.Errorf("runtime: call timeout must be positive, got %s", c.callTimeout)
	case c.poolSize < 0:
		return fmt.Errorf("runtime: pool size must not be negative, got %d", c.poolSize)
	case c.logRate <= 0:
		return fmt.Errorf("runtime: log rate must be positive, got %d", c.logRate)
	case c.maxModule <= 0:
		return fmt.Errorf("runtime: maximum module size must be positive, got %d", c.maxModule)
	case c.compileTime <= 0:
		return fmt.Errorf("runtime: compile timeout must be positive, got %s", c.compileTime)
	}
	return nil
}

// Close stops the engine's watchdog (calls of functions still open are then
// no longer stopped at their deadline) and releases the compilation cache.
//
// A compile that Load abandoned (WithCompileTimeout) and that still runs
// keeps the compilation cache open until it ends.
func (e *Engine) Close(ctx context.Context) error {
	e.wd.close()
	e.mu.Lock()
	e.mu.closed = true
	busy := e.mu.compiles > 0
	e.mu.Unlock()
	if busy {
		return nil // the last compile closes the cache (compileEnded)
	}
	return e.cache.Close(ctx)
}

func (e *Engine) compileStarted() {
	e.mu.Lock()
	e.mu.compiles++
	e.mu.Unlock()
}

func (e *Engine) compileEnded() {
	e.mu.Lock()
	e.mu.compiles--
	last := e.mu.closed && e.mu.compiles == 0
	e.mu.Unlock()
	if last {
		_ = e.cache.Close(context.Background())
	}
}

var wasmMagic = []byte{0x00, 'a', 's', 'm'}

// Load compiles and validates a module and returns a Function ready to call.
// name identifies the function in logs and errors. Options override the
// engine's for this function.
//
// Unless WithUninterruptible is given, the module is first rewritten so that
// a call can be stopped at its deadline or when its context is done: a check
// at every loop header and function entry, which the engine's watchdog turns
// into a trap (package runtime/internal/interrupt). A module the rewrite
// cannot read (an opcode it does not know, memory64, several memories, more
// than 50,000 locals in a function) is refused with ErrInvalidModule naming
// what and where. Digest, Size and the manifest are those of the module as
// given; the compiled code (and its cache entry) is the rewritten module's.
//
// Before compiling, a module over a bound is refused with ErrModuleLimit: its
// size (WithMaxModuleSize, default 64 MiB), and, as the rewrite reads the
// code, blocks nested deeper than 10,000, a br_table of more than 65,520
// labels, more than 1,000,000 functions or a body over 7,654,321 bytes (the
// compiler's time grows with the square of the nesting). The compile itself
// is bounded by WithCompileTimeout (ErrCompileTimeout) and by ctx.
//
// Validation, in order: the bytes are a Wasm binary; it compiles; it exports
// the eddy_abi_v1 marker (a different version gives ErrABIVersion); it imports
// only what the host provides (ErrImport); it exports memory, eddy_alloc and
// eddy_manifest with the right types (ErrMissingExport); an instance starts and
// its manifest is valid (ErrManifest); every kind the manifest names has its
// exports (ErrMissingExport). Each failure wraps one of those sentinels.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, opts ...Option) (*Function, error) {
	cfg := e.cfg
	for _, o := range opts {
		o.apply(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Function, error) { return nil, fmt.Errorf("function %s: %w", name, err) }
	if !bytes.HasPrefix(wasm, wasmMagic) {
		return fail(fmt.Errorf("%w: the file starts with %q, not the Wasm magic \"\\x00asm\"", ErrNotWasm, head(wasm)))
	}
	if len(wasm) > cfg.maxModule {
		return fail(fmt.Errorf("%w: module of %d bytes, more than %d", ErrModuleLimit, len(wasm), cfg.maxModule))
	}
	sum := sha256.Sum256(wasm)
	f := &Function{
		name:   name,
		digest: hex.EncodeToString(sum[:]),
		size:   len(wasm),
		cfg:    cfg,
		pool:   make(chan *Instance, cfg.poolSize),
	}
	f.limiter = newLimiter(cfg.logRate)
	code := wasm
	if !cfg.noInterrupt {
		m, err := e.instrumented.get(f.digest, wasm)
		if err != nil {
			if interrupt.IsLimit(err) {
				return fail(fmt.Errorf("%w: %v", ErrModuleLimit, err))
			}
			return fail(fmt.Errorf("%w: adding interrupt checks: %v", ErrInvalidModule, err))
		}
		code, f.wd, f.startExport = m.Wasm, e.wd, m.Start
	}
	// wazero's own termination checks stay off: the interrupt checks
	// replace them (with WithUninterruptible, nothing does).
	rtCfg := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(e.cache).
		// The memory limit is enforced by the instances' allocator
		// (Instance.Allocate), which sees the grows it refuses.
		WithMemoryLimitPages(65536).
		WithCloseOnContextDone(false)
	f.rt = wazero.NewRuntimeWithConfig(ctx, rtCfg)
	ok := false
	defer func() {
		if !ok && f.rt != nil {
			f.rt.Close(ctx)
		}
	}()
	compiled, err := e.compile(ctx, f.rt, code, cfg.compileTime)
	if err != nil {
		if errors.Is(err, errAbandoned) {
			f.rt = nil // the compile's goroutine closes it
			if ctx.Err() != nil {
				return fail(fmt.Errorf("compile: %w", ctx.Err()))
			}
			return fail(fmt.Errorf("%w: not compiled within %s", ErrCompileTimeout, cfg.compileTime))
		}
		return fail(fmt.Errorf("%w: %v", ErrInvalidModule, err))
	}
	f.compiled = compiled
	if err := checkMarker(compiled); err != nil {
		return fail(err)
	}
	if err := f.checkImports(); err != nil {
		return fail(err)
	}
	if err := checkExports(compiled, []string{abi.ExportAlloc, abi.ExportManifest}); err != nil {
		return fail(err)
	}
	if _, ok := compiled.ExportedMemories()[abi.ExportMemory]; !ok {
		return fail(fmt.Errorf("%w: no memory exported as %q", ErrMissingExport, abi.ExportMemory))
	}
	for _, m := range compiled.ExportedMemories() {
		if int(m.Min())*pageSize > cfg.memoryLimit {
			return fail(fmt.Errorf("module needs %d pages (%d bytes) of memory at start, above the limit of %d bytes", m.Min(), int(m.Min())*pageSize, cfg.memoryLimit))
		}
	}
	if err := f.instantiateHost(ctx); err != nil {
		return fail(err)
	}
	inst, err := f.NewInstance(ctx)
	if err != nil {
		return fail(err)
	}
	m, err := inst.manifest(ctx)
	if err != nil {
		inst.Close(ctx)
		return fail(fmt.Errorf("%w: %v", ErrManifest, err))
	}
	f.manifest = m
	for _, k := range m.Kinds {
		if err := checkExports(compiled, k.Exports()); err != nil {
			inst.Close(ctx)
			return fail(fmt.Errorf("manifest names kind %s: %w", k, err))
		}
	}
	f.Release(ctx, inst)
	ok = true
	return f, nil
}

// errAbandoned says that compile gave up waiting (timeout or ctx).
var errAbandoned = errors.New("compile abandoned")

// compile compiles code on rt, waiting at most timeout and while ctx is not
// done. When it gives up (errAbandoned), the compile goes on in its
// goroutine, which then owns rt and closes it when the compile ends (see
// WithCompileTimeout for why it cannot be stopped).
func (e *Engine) compile(ctx context.Context, rt wazero.Runtime, code []byte, timeout time.Duration) (wazero.CompiledModule, error) {
	type result struct {
		m   wazero.CompiledModule
		err error
	}
	done := make(chan result, 1)
	var mu sync.Mutex
	gaveUp := false
	e.compileStarted()
	go func() {
		defer e.compileEnded()
		m, err := rt.CompileModule(context.WithoutCancel(ctx), code)
		mu.Lock()
		defer mu.Unlock()
		if gaveUp {
			rt.Close(context.Background()) // closes m too
			return
		}
		done <- result{m, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.m, r.err
	case <-t.C:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case r := <-done: // it finished meanwhile
		return r.m, r.err
	default:
		gaveUp = true
		return nil, errAbandoned
	}
}

func head(b []byte) []byte {
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// checkMarker finds the eddy_abi_vN export.
func checkMarker(m wazero.CompiledModule) error {
	var others []string
	for name := range m.ExportedFunctions() {
		if name == abi.ExportMarker {
			return nil
		}
		if v, ok := strings.CutPrefix(name, abi.MarkerPrefix); ok {
			if _, err := strconv.Atoi(v); err == nil {
				others = append(others, "v"+v)
			}
		}
	}
	if len(others) > 0 {
		sort.Strings(others)
		return fmt.Errorf("%w: module speaks ABI %s; this host supports v%d", ErrABIVersion, strings.Join(others, ", "), abi.Version)
	}
	return fmt.Errorf("%w: no %q export (the ABI version marker)", ErrNotFunction, abi.ExportMarker)
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// exportTypes are the signatures of ABI.md section 2.
var exportTypes = map[string][2][]api.ValueType{
	abi.ExportAlloc:     {{i32}, {i32}},
	abi.ExportManifest:  {nil, {i64}},
	abi.ExportProcess:   {{i32, i32}, {i64}},
	abi.ExportAggInit:   {{i32, i32}, {i64}},
	abi.ExportAggAdd:    {{i32, i32}, {i64}},
	abi.ExportAggMerge:  {{i32, i32}, {i64}},
	abi.ExportAggResult: {{i32, i32}, {i64}},
	abi.ExportJoin:      {{i32, i32}, {i64}},
	abi.ExportKey:       {{i32, i32}, {i64}},
	abi.ExportTimestamp: {{i32, i32}, {i64}},
	abi.ExportTimer:     {{i32, i32}, {i64}},
}

func checkExports(m wazero.CompiledModule, names []string) error {
	fns := m.ExportedFunctions()
	for _, name := range names {
		def, ok := fns[name]
		if !ok {
			return fmt.Errorf("%w: no export %q", ErrMissingExport, name)
		}
		want := exportTypes[name]
		if !slices.Equal(def.ParamTypes(), want[0]) || !slices.Equal(def.ResultTypes(), want[1]) {
			return fmt.Errorf("%w: export %q has type %s, want %s", ErrMissingExport, name,
				sig(def.ParamTypes(), def.ResultTypes()), sig(want[0], want[1]))
		}
	}
	return nil
}

func sig(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	return "(" + names(params) + ") -> (" + names(results) + ")"
}

// checkImports refuses imports the host does not provide.
func (f *Function) checkImports() error {
	for _, def := range f.compiled.ImportedFunctions() {
		mod, name, _ := def.Import()
		f.imports = append(f.imports, mod+"."+name)
		switch mod {
		case abi.WASIModule:
			continue
		case abi.HostModule:
			want, ok := hostTypes[name]
			if !ok {
				return fmt.Errorf("%w: %s.%s is not a host function of ABI v%d", ErrImport, mod, name, abi.Version)
			}
			if !slices.Equal(def.ParamTypes(), want[0]) || !slices.Equal(def.ResultTypes(), want[1]) {
				return fmt.Errorf("%w: %s.%s has type %s, want %s", ErrImport, mod, name,
					sig(def.ParamTypes(), def.ResultTypes()), sig(want[0], want[1]))
			}
		default:
			return fmt.Errorf("%w: %s.%s (the host provides only modules %q and %q)", ErrImport, mod, name, abi.HostModule, abi.WASIModule)
		}
	}
	for _, def := range f.compiled.ImportedMemories() {
		mod, name, _ := def.Import()
		return fmt.Errorf("%w: memory %s.%s (a guest must define and export its own memory)", ErrImport, mod, name)
	}
	sort.Strings(f.imports)
	return nil
}
