package runtime

import (
	"bytes"
	"log/slog"
	"time"
)

// Defaults of the options.
const (
	DefaultMemoryLimit = 128 << 20 // bytes per instance
	DefaultCallTimeout = time.Second
	DefaultPoolSize    = 8 // idle instances kept per function
	DefaultLogRate     = 100
	// DefaultMaxModuleSize bounds the bytes of a module Load accepts: Go
	// guests are about 3 MB, TinyGo, Rust and C ones far less.
	DefaultMaxModuleSize = 64 << 20
	// DefaultCompileTimeout bounds the time Load spends compiling a module
	// (a Go guest takes about a second, more on a busy machine).
	DefaultCompileTimeout = time.Minute
	maxMemoryLimit        = 2<<30 - 64<<10 // keep pointers below 2^31 (ABI.md section 2)
	pageSize              = 64 << 10
)

// Clock selects the clocks a guest sees through WASI.
type Clock int

const (
	// ClockDeterministic gives guests clocks that start at a fixed instant and
	// advance only when read: replays produce the same output. The default.
	ClockDeterministic Clock = iota
	// ClockSystem gives guests the host's real clocks (not deterministic).
	ClockSystem
)

type config struct {
	config      map[string][]byte // the step's configuration (WithConfig)
	cacheDir    string            // "" with noCache: no disk cache
	noCache     bool
	logger      *slog.Logger
	memoryLimit int
	callTimeout time.Duration
	poolSize    int
	logRate     int
	clock       Clock
	seed        uint64
	counters    Counters
	noInterrupt bool
	maxModule   int
	compileTime time.Duration
}

func defaultConfig() config {
	return config{
		logger:      slog.Default(),
		memoryLimit: DefaultMemoryLimit,
		callTimeout: DefaultCallTimeout,
		poolSize:    DefaultPoolSize,
		logRate:     DefaultLogRate,
		maxModule:   DefaultMaxModuleSize,
		compileTime: DefaultCompileTimeout,
	}
}

// Option configures an Engine (NewEngine) or one function (Engine.Load, where
// it overrides the engine's setting).
type Option interface{ apply(*config) }

type optFunc func(*config)

func (f optFunc) apply(c *config) { f(c) }

// WithCacheDir stores compiled modules in dir, so a restart does not compile
// again. Default: the "eddy/wazero" folder under os.UserCacheDir. Only
// meaningful for NewEngine.
func WithCacheDir(dir string) Option {
	return optFunc(func(c *config) { c.cacheDir, c.noCache = dir, false })
}

// WithoutCache disables the on-disk compilation cache (modules are compiled in
// memory each time the engine starts). Only meaningful for NewEngine.
func WithoutCache() Option { return optFunc(func(c *config) { c.cacheDir, c.noCache = "", true }) }

// WithConfig gives the function its step's configuration, which guests
// read with the config_get host call (ABI.md "Configuration"). The map is
// copied. Names and values are the caller's to bound (abi.MaxConfigName,
// abi.MaxConfigValue); values may be secrets, which the runtime never
// logs.
func WithConfig(cfg map[string][]byte) Option {
	c := make(map[string][]byte, len(cfg))
	for k, v := range cfg {
		c[k] = bytes.Clone(v)
	}
	return optFunc(func(o *config) { o.config = c })
}

// WithLogger sets the logger that receives guest logs and captured
// stdout/stderr. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return optFunc(func(c *config) { c.logger = l }) }

// WithMemoryLimit caps each instance's linear memory in bytes, rounded down to
// 64 KiB pages. Default 128 MiB; at most just under 2 GiB.
func WithMemoryLimit(bytes int) Option {
	return optFunc(func(c *config) { c.memoryLimit = bytes })
}

// WithCallTimeout sets the deadline of one guest call (one batch). Default 1s.
func WithCallTimeout(d time.Duration) Option { return optFunc(func(c *config) { c.callTimeout = d }) }

// WithPoolSize sets how many idle instances Function keeps for reuse.
// Default 8.
func WithPoolSize(n int) Option { return optFunc(func(c *config) { c.poolSize = n }) }

// WithLogRate limits guest log lines (host log calls plus stdout/stderr) to n
// lines and n KiB per second per function; excess lines are counted and
// reported. A line is at most 4 KiB (longer ones are cut). Default 100.
func WithLogRate(n int) Option { return optFunc(func(c *config) { c.logRate = n }) }

// WithMaxModuleSize bounds the size of a module Load accepts, in bytes; a
// larger one is refused with ErrModuleLimit. Default DefaultMaxModuleSize
// (64 MiB).
func WithMaxModuleSize(bytes int) Option { return optFunc(func(c *config) { c.maxModule = bytes }) }

// WithCompileTimeout bounds the time Load spends compiling one module; past
// it (or when Load's context is done first) Load returns ErrCompileTimeout
// (or the context's error). Default DefaultCompileTimeout (1 minute).
//
// # Why the compile goes on
//
// wazero's compiler does not look at the context while it compiles a
// function, so a compile cannot be stopped: Load abandons it and returns,
// and the compile runs on in its goroutine (using a CPU) until it ends,
// when its runtime is closed. The bounds Load checks before compiling
// (nesting depth, br_table sizes, function count and size, module size)
// keep such compiles short; the timeout is the last resort.
func WithCompileTimeout(d time.Duration) Option {
	return optFunc(func(c *config) { c.compileTime = d })
}

// WithClock selects the guest clocks. Default ClockDeterministic.
func WithClock(k Clock) Option { return optFunc(func(c *config) { c.clock = k }) }

// WithSeed seeds the guests' random source (WASI random_get). Every new
// instance starts from the same seed. Default 0.
func WithSeed(seed uint64) Option { return optFunc(func(c *config) { c.seed = seed }) }

// WithUninterruptible loads the function as it is, without the checks that
// let the engine stop a call at its deadline or on cancellation: a guest that
// loops forever hangs its caller, and any long call holds up the whole
// process's garbage collection until it returns (Go cannot preempt a
// goroutine while it runs compiled Wasm). Only for audited functions, and to
// measure what the checks cost.
//
// # Why
//
// By default Load rewrites the module (runtime/internal/interrupt): at every
// function entry and loop header it takes one unit from a fuel counter (a
// load, a subtraction, a store and a branch), and every 65,536 checks the
// guest returns to Go, where the engine's watchdog can stop it. That costs
// the Nexmark guests 2–8% of their throughput, the reference upper-case maps
// 1–12% and the JSON filter, which loops per byte, 8–21% (BENCHMARKS.md,
// "Interrupting guests cheaply"); wazero's own termination checks, used
// before, cost Go guests 2.5x and per-byte loops up to 8x. The default keeps
// the checks.
func WithUninterruptible() Option { return optFunc(func(c *config) { c.noInterrupt = true }) }

// WithCounters sends the guests' counter_add calls to c. Default: counters are
// kept by the Function and read with Function.Counters.
func WithCounters(c Counters) Option { return optFunc(func(cfg *config) { cfg.counters = c }) }

// Counters receives named counter increments from guests. Implementations must
// be safe for concurrent use.
type Counters interface {
	Add(function, name string, delta int64)
}

// State is the keyed store behind the state_get/put/delete host calls of one
// instance (ABI.md section 3). Values returned by Get may be retained by the
// caller only until the next call on the State.
type State interface {
	Get(key []byte) (value []byte, ok bool, err error)
	Put(key, value []byte) error
	Delete(key []byte) error
}
