package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/runtime"
)

// cli holds what the commands share: the streams and the global flags.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	logFormat      string
	logLevel       string
	cacheDir       string
	noCache        bool
	logger         *slog.Logger
}

// execute runs the CLI with args and returns the process exit code.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		fmt.Fprintf(stderr, "eddy: %v\n", err)
		return 1
	}
	return 0
}

// exitError ends the command with a code after it has reported the details.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "eddy",
		Short: "Eddy runs stream-processing functions written in any language, compiled to WebAssembly",
		Long: `Eddy is a stream-processing node whose logic is pluggable WebAssembly.
Write map, filter, aggregate and join functions in Go, Rust, C or
AssemblyScript, compile them to .wasm, and let Eddy run them over records.`,
		Example: `  eddy test testdata/go/upper.wasm --input testdata/samples/words.jsonl
  eddy inspect testdata/go/upper.wasm`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return c.setup()
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	pf.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	pf.StringVar(&c.cacheDir, "cache-dir", "", "compilation cache directory (default: eddy/wazero under the user cache dir)")
	pf.BoolVar(&c.noCache, "no-cache", false, "do not use the on-disk compilation cache")
	root.AddCommand(
		newTestCmd(c),
		newInspectCmd(c),
		newConformanceCmd(c),
		newNewCmd(c),
		newRunCmd(c),
		newDevCmd(c),
		newDiffCmd(c),
		newStateCmd(c),
		newBenchCmd(c),
		newBrokerCmd(c),
		newProduceCmd(c),
		newConsumeCmd(c),
		newVersionCmd(c),
		newDeployCmd(c),
		newFunctionsCmd(c),
		newPromoteCmd(c),
		newDiscardCmd(c),
		newStatusCmd(c),
		newTopCmd(c),
		newResetCmd(c),
	)
	return root
}

func (c *cli) setup() error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(c.logFormat) {
	case "text":
		c.logger = slog.New(slog.NewTextHandler(c.stderr, opts))
	case "json":
		c.logger = slog.New(slog.NewJSONHandler(c.stderr, opts))
	default:
		return fmt.Errorf("--log-format: want text or json, got %q", c.logFormat)
	}
	return nil
}

// functionFlags are the flags of commands that load one function.
type functionFlags struct {
	memoryLimit int
	timeout     time.Duration
	config      []string // name=value entries of the function's config (registerConfig)
}

func (f *functionFlags) register(cmd *cobra.Command, timeout time.Duration) {
	cmd.Flags().IntVar(&f.memoryLimit, "memory-limit", runtime.DefaultMemoryLimit, "memory limit per instance, in bytes")
	cmd.Flags().DurationVar(&f.timeout, "timeout", timeout, "deadline of one call into the function (one batch)")
}

// registerConfig adds --config, the entries a function reads with
// config_get, as a pipeline step's config gives them.
func (f *functionFlags) registerConfig(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.config, "config", nil, "a config entry of the function, name=value (repeatable)")
}

// configMap parses --config.
func (f *functionFlags) configMap() (map[string][]byte, error) {
	if len(f.config) == 0 {
		return nil, nil
	}
	if len(f.config) > abi.MaxConfigEntries {
		return nil, fmt.Errorf("--config: at most %d entries, got %d", abi.MaxConfigEntries, len(f.config))
	}
	m := map[string][]byte{}
	for _, e := range f.config {
		name, value, ok := strings.Cut(e, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("--config %q: want name=value", abi.TruncateReason(e, 64))
		case name == "" || len(name) > abi.MaxConfigName:
			return nil, fmt.Errorf("--config: a name is 1 to %d bytes, got %d", abi.MaxConfigName, len(name))
		case len(value) > abi.MaxConfigValue:
			return nil, fmt.Errorf("--config %s: the value is over %d bytes", name, abi.MaxConfigValue)
		}
		m[name] = []byte(value)
	}
	return m, nil
}

// validate checks the flags against the ranges of the pipeline file's
// limits.memory_limit and limits.call_timeout (docs/pipeline.md).
func (f *functionFlags) validate() error {
	if _, err := f.configMap(); err != nil {
		return err
	}
	if f.memoryLimit < host.MinMemoryLimit || f.memoryLimit > host.MaxMemoryLimit {
		return fmt.Errorf("--memory-limit: must be between %d and %d bytes, got %d", host.MinMemoryLimit, host.MaxMemoryLimit, f.memoryLimit)
	}
	if f.timeout < time.Millisecond || f.timeout > host.MaxCallTimeout {
		return fmt.Errorf("--timeout: must be between 1ms and %s, got %s", host.MaxCallTimeout, f.timeout)
	}
	return nil
}

// engineOptions turns the global and function flags into runtime options.
func (c *cli) engineOptions(ff *functionFlags) []runtime.Option {
	var opts []runtime.Option
	switch {
	case c.noCache:
		opts = append(opts, runtime.WithoutCache())
	case c.cacheDir != "":
		opts = append(opts, runtime.WithCacheDir(c.cacheDir))
	}
	if ff != nil {
		opts = append(opts, runtime.WithMemoryLimit(ff.memoryLimit), runtime.WithCallTimeout(ff.timeout))
		if cfg, _ := ff.configMap(); cfg != nil {
			opts = append(opts, runtime.WithConfig(cfg))
		}
	}
	return opts
}

// loadFunction reads and loads a module. The caller calls done when finished
// with the function.
func (c *cli) loadFunction(ctx context.Context, path string, ff *functionFlags) (fn *runtime.Function, done func(), err error) {
	if err := ff.validate(); err != nil {
		return nil, nil, err
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	eng, err := runtime.NewEngine(append(c.engineOptions(ff), runtime.WithLogger(c.logger))...)
	if err != nil {
		return nil, nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	fn, err = eng.Load(ctx, name, wasm)
	if err != nil {
		eng.Close(ctx)
		return nil, nil, err
	}
	return fn, func() {
		fn.Close(context.WithoutCancel(ctx))
		eng.Close(context.WithoutCancel(ctx))
	}, nil
}
