package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// run executes the CLI in process, like cobra's own command tests.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--cache-dir", cacheDir}, args...)
	code = execute(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

var cacheDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "eddy-cli-cache")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func td(p string) string { return filepath.Join("..", "..", "testdata", p) }

func TestTestCommandHostileAndInvalid(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
		stderr []string
	}{
		{"not wasm", []string{"test", td("notwasm.wasm")}, "", 1, "", []string{"not a WebAssembly module"}},
		{"missing file", []string{"test", td("nope.wasm")}, "", 1, "", []string{"no such file"}},
		{"wrong abi", []string{"test", td("wat/abiv2.wasm")}, "", 1, "", []string{"speaks ABI v2; this host supports v1"}},
		{"trap isolates every record", []string{"test", td("wat/trap.wasm")}, "{\"value\":\"a\"}\n\n{\"value\":\"b\"}\n", 1, "",
			[]string{"line 1: function", "line 3: function", "trap: wasm error: unreachable", "2 of 2 records failed"}},
		{"infinite loop stops at the deadline", []string{"test", "--timeout", "100ms", td("wat/loop.wasm")}, "{\"value\":\"a\"}\n", 1, "",
			[]string{"line 1:", "timeout: call did not finish within 100ms"}},
		{"bad input line", []string{"test", td("wat/dropall.wasm")}, "{\"value\":1}\nnot json\n", 1, "", []string{"line 2: not a record object"}},
		{"kind not implemented", []string{"test", "--kind", "aggregate", td("wat/dropall.wasm")}, "", 1, "", []string{"--kind aggregate: the module implements [process]"}},
		{"dropall drops", []string{"test", td("wat/dropall.wasm")}, "{\"value\":1}\n{\"value\":2}\n", 0, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if stdout != tc.stdout {
				t.Fatalf("stdout %q, want %q", stdout, tc.stdout)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Fatalf("stderr does not say %q:\n%s", s, stderr)
				}
			}
		})
	}
}

func TestInspect(t *testing.T) {
	stdout, stderr, code := run(t, "", "inspect", "--json", td("wat/negative.wasm"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var info struct {
		SHA256  string   `json:"sha256"`
		ABI     int      `json:"abi"`
		Kinds   []string `json:"kinds"`
		Imports []string `json:"imports"`
		Memory  struct {
			MinPages   int `json:"min_pages"`
			LimitBytes int `json:"limit_bytes"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(stdout), &info); err != nil {
		t.Fatal(err)
	}
	if len(info.SHA256) != 64 || info.ABI != 1 || len(info.Kinds) != 1 || info.Kinds[0] != "process" ||
		len(info.Imports) != 1 || info.Imports[0] != "eddy.error" || info.Memory.MinPages != 2 || info.Memory.LimitBytes != 128<<20 {
		t.Fatalf("inspect says %+v", info)
	}
	stdout, _, code = run(t, "", "inspect", "--memory-limit", "1048576", td("wat/dropall.wasm"))
	if code != 0 || !strings.Contains(stdout, "kinds    process") || !strings.Contains(stdout, "host limit 1.0 MiB") {
		t.Fatalf("exit %d, text:\n%s", code, stdout)
	}
	_, stderr, code = run(t, "", "inspect", td("wat/missing.wasm"))
	if code != 1 || !strings.Contains(stderr, `no export "eddy_process"`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	stdout, _, code := run(t, "", "version")
	if code != 0 || !strings.Contains(stdout, "guest ABI v1") || !strings.Contains(stdout, "github.com/tetratelabs/wazero") ||
		strings.HasPrefix(stdout, "eddy dev\n") {
		t.Fatalf("version: %d %q", code, stdout)
	}
	for _, cmd := range []string{"test", "inspect", "conformance", "version"} {
		stdout, _, code := run(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(stdout, "Examples:") {
			t.Errorf("%s --help: exit %d, no example:\n%s", cmd, code, stdout)
		}
	}
}

// TestVersionFromBuildInfo: eddy version of a build from a git checkout
// shows the commit, its time and whether the tree was modified; of a
// release its version; with -ldflags -X main.version that version; and
// "(devel)" when nothing more is known, never "dev".
func TestVersionFromBuildInfo(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/eddy-streams/eddy", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "a6400d1f0e9c8b7a6d5e4f3a2b1c0d9e8f7a6b5c"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"}},
		Deps: []*debug.Module{{Path: "github.com/tetratelabs/wazero", Version: "v1.12.0"}, {Path: "golang.org/x/sys", Version: "v0.48.0"}}}
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/eddy-streams/eddy", Version: "v1.4.0"}}
	for _, tc := range []struct {
		name, v string
		bi      *debug.BuildInfo
		want    string
	}{
		{"checkout", "", checkout, "eddy (devel)\ncommit a6400d1f0e9c8b7a6d5e4f3a2b1c0d9e8f7a6b5c of 2026-12-01T10:00:00Z, modified (the work tree had uncommitted changes)\n" +
			"guest ABI v1\ngo1.26.8\ngithub.com/tetratelabs/wazero v1.12.0\n"},
		{"go install of a release", "", release, "eddy v1.4.0\nguest ABI v1\ngo1.26.8\n"},
		{"ldflags", "v1.5.0-rc1", release, "eddy v1.5.0-rc1\nguest ABI v1\ngo1.26.8\n"},
		{"no build info", "", nil, "eddy (devel)\nguest ABI v1\n"},
	} {
		var out strings.Builder
		writeVersion(&out, tc.v, tc.bi)
		if out.String() != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, out.String(), tc.want)
		}
	}
	// A clean checkout says nothing about modifications.
	checkout.Settings[len(checkout.Settings)-1].Value = "false"
	var out strings.Builder
	writeVersion(&out, "", checkout)
	if !strings.Contains(out.String(), "commit a6400d1f0e9c8b7a6d5e4f3a2b1c0d9e8f7a6b5c of 2026-12-01T10:00:00Z\n") {
		t.Errorf("clean checkout:\n%s", out.String())
	}
}

func TestConformanceCommand(t *testing.T) {
	stdout, stderr, code := run(t, "", "conformance", "--calls", "2000", "--reference", "split", td("go/split.wasm"))
	if code != 0 || !strings.Contains(stdout, "ok  reference/split/splits-words") || !strings.Contains(stdout, " 0 failed") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = run(t, "", "conformance", "--calls", "100", td("wat/malformed.wasm"))
	if code != 1 || !strings.Contains(stdout, "FAIL  process/batch-sizes") || !strings.Contains(stdout, "malformed output") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	// A guest that never returns, with ten minutes per call (the longest --timeout): --max-time ends it.
	_, stderr, code = run(t, "", "conformance", "--timeout", "10m", "--max-time", "300ms", td("wat/loop.wasm"))
	if code == 0 || !strings.Contains(stderr, "stopped in case process/batch-sizes after 300ms, the run's time limit") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// TestConformanceReferenceAndGuestLogs: reference checks run only with
// --reference (a correct module that is merely named upper passes without
// it), and the guest's log lines are written at --log-level debug only.
func TestConformanceReferenceAndGuestLogs(t *testing.T) {
	stdout, stderr, code := run(t, "", "conformance", "--calls", "100", td("wat/namedupper.wasm"))
	if code != 0 || strings.Contains(stdout, "reference/") || !strings.Contains(stdout, "--reference upper checks its exact behaviour") {
		t.Fatalf("without --reference: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = run(t, "", "conformance", "--calls", "100", "--reference", "upper", td("wat/namedupper.wasm"))
	if code != 1 || !strings.Contains(stdout, "FAIL  reference/upper/upper-cases") || !strings.Contains(stdout, `want: k="Key" v="HELLO`) {
		t.Fatalf("with --reference upper: exit %d\n%s", code, stdout)
	}
	_, stderr, code = run(t, "", "--log-level", "debug", "conformance", "--calls", "100", "--reference", "counter", td("go/counter.wasm"))
	if code != 0 || !strings.Contains(stderr, `msg="guest log" case=reference/counter/keyed-state-counters-and-logging`) ||
		!strings.Contains(stderr, `text="counter: 1000 records"`) {
		t.Fatalf("at debug: exit %d, stderr:\n%s", code, stderr)
	}
	if _, stderr, _ = run(t, "", "conformance", "--calls", "100", "--reference", "counter", td("go/counter.wasm")); strings.Contains(stderr, "guest log") {
		t.Fatalf("guest log lines at the default level:\n%s", stderr)
	}
}

// startRun runs eddy with args (after --cache-dir), typically `run PIPELINE
// ...`, in the background until stop is called or the test ends; stop fails
// the test unless eddy exited 0. logs is what eddy wrote to stderr.
func startRun(t *testing.T, args ...string) (stop func(), logs *logBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	logs = &logBuffer{}
	go func() {
		done <- execute(ctx, append([]string{"--cache-dir", cacheDir}, args...), strings.NewReader(""), io.Discard, logs)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("eddy %s: exit %d: %s", strings.Join(args, " "), code, logs.String())
			}
		})
	}
	t.Cleanup(stop)
	return stop, logs
}

// logBuffer takes a node's log while the test reads it.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
