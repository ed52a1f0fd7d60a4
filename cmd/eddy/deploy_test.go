package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/registry"
)

const adminToken = "cli-test-token"

// wasmHeader is what admin.MemoryBackend takes for a module.
const wasmHeader = "\x00asm\x01\x00\x00\x00"

// startAdmin serves an admin API over a MemoryBackend with the steps
// orders/enrich and orders/score on a loopback port until the test ends. Its
// clock ticks a second per event from 2025-01-02T03:04:00Z, and a module's
// function version is what follows the Wasm header.
func startAdmin(t *testing.T) (b *admin.MemoryBackend, url string) {
	t.Helper()
	t.Setenv(admin.TokenEnv, "")
	t.Setenv("EDDY_ADMIN", "")
	b = admin.NewMemoryBackend(registry.StepKey{Pipeline: "orders", Step: "enrich"}, registry.StepKey{Pipeline: "orders", Step: "score"})
	b.Node = "node-1"
	var mu sync.Mutex
	tick := 0
	b.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick++
		return time.Date(2025, 1, 2, 3, 4, tick, 0, time.UTC)
	}
	b.Inspect = func(req admin.DeployRequest) (string, string, error) {
		m := string(req.Module)
		if !strings.HasPrefix(m, wasmHeader) {
			return "", "", admin.Errorf(422, admin.CodeInvalidModule, "not a WebAssembly module")
		}
		return "enricher", strings.TrimPrefix(m, wasmHeader), nil
	}
	s, err := admin.NewServer(b, admin.Config{Addr: "127.0.0.1:0", Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("admin server: %v", err)
		}
	})
	return b, s.URL()
}

// writeFiles writes name → content files into a temporary directory and
// returns their paths by name.
func writeFiles(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

func TestDeployRejections(t *testing.T) {
	b, url := startAdmin(t)
	f := writeFiles(t, map[string]string{
		"ok.wasm":     wasmHeader + "1.0",
		"bad.wasm":    "MZ",
		"empty.wasm":  "",
		"in.jsonl":    "{\"value\":\"a\"}\n",
		"other.jsonl": "{\"value\":\"b\"}\n",
		"token":       adminToken + "\n",
		"wrong":       "nope\n",
	})
	ok := []string{"deploy", f["ok.wasm"], "--admin", url}
	step := []string{"--pipeline", "orders", "--step", "enrich"}
	args := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name   string
		args   []string
		stderr []string
		called bool // whether the backend gets the call
	}{
		{"no token", args(ok, step), []string{"eddy: deploy rejected: unauthorized: missing token", "no token given: use --token-file"}, false},
		{"wrong token", args(ok, step, []string{"--token-file", f["wrong"]}), []string{"deploy rejected: unauthorized: wrong token"}, false},
		{"missing token file", args(ok, step, []string{"--token-file", f["token"] + ".nope"}), []string{"admin token:", "no such file"}, false},
		{"invalid module", args([]string{"deploy", f["bad.wasm"], "--admin", url, "--token-file", f["token"]}, step), []string{"eddy: deploy rejected: invalid_module: not a WebAssembly module"}, true},
		{"empty module", args([]string{"deploy", f["empty.wasm"], "--admin", url, "--token-file", f["token"]}, step), []string{"empty.wasm: empty file"}, false},
		{"smoke test", args(ok, step, []string{"--token-file", f["token"], "--sample", f["in.jsonl"], "--expect", f["other.jsonl"]}), []string{"deploy rejected: smoke_test_failed:"}, true},
		{"expect without sample", args(ok, step, []string{"--token-file", f["token"], "--expect", f["other.jsonl"]}), []string{"--expect needs --sample"}, false},
		{"unknown step", args(ok, []string{"-p", "orders", "-s", "nope", "--token-file", f["token"]}), []string{"deploy rejected: not_found: no step orders/nope"}, true},
		{"no step", args(ok, []string{"-p", "orders", "--token-file", f["token"]}), []string{`required flag(s) "step" not set`}, false},
		{"no module", []string{"deploy", "-p", "orders", "-s", "enrich"}, []string{"accepts 1 arg(s), received 0"}, false},
		{"config without a name", args(ok, step, []string{"--token-file", f["token"], "--config", "=5"}), []string{`--config "=5": want NAME=VALUE`}, false},
		{"config-env without a variable", args(ok, step, []string{"--token-file", f["token"], "--config-env", "token="}), []string{"--config-env token: name the environment variable"}, false},
		{"config entry twice", args(ok, step, []string{"--token-file", f["token"], "--config", "a=1", "--config-file", "a=f.txt"}), []string{"config entry a given twice"}, false},
		{"no node", args([]string{"deploy", f["ok.wasm"], "--admin", "http://127.0.0.1:1", "--token", adminToken}, step), []string{"connection refused", "is a node's admin API listening at http://127.0.0.1:1?"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := b.Calls()
			stdout, stderr, code := run(t, "", tc.args...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			if called := b.Calls() != calls; called != tc.called {
				t.Errorf("backend called: %v, want %v", called, tc.called)
			}
		})
	}
	if steps, _ := b.Functions(context.Background(), ""); len(steps[0].History)+len(steps[1].History) != 0 {
		t.Fatalf("a rejected deploy left events: %+v", steps)
	}
}

// TestDeployCarriesConfig: the config flags of eddy deploy reach the
// registry event whole (values, and the names of the variables and files
// secrets come from); a deploy without them carries on the live version's.
func TestDeployCarriesConfig(t *testing.T) {
	b, url := startAdmin(t)
	f := writeFiles(t, map[string]string{"ok.wasm": wasmHeader + "1.0"})
	base := []string{"deploy", f["ok.wasm"], "--admin", url, "--token", adminToken, "-p", "orders", "-s", "enrich"}
	if _, stderr, code := run(t, "", append(base, "--config", "threshold=500", "--config", "empty=",
		"--config-env", "token=ALERT_TOKEN", "--config-file", "cert=certs/alert.pem")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "", base...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := b.History(context.Background(), "orders", "enrich")
	if err != nil || len(st.History) != 2 {
		t.Fatalf("history %+v, %v", st, err)
	}
	want := map[string]registry.ConfigEntry{"threshold": {Value: "500"}, "empty": {}, "token": {Env: "ALERT_TOKEN"}, "cert": {File: "certs/alert.pem"}}
	if got := st.History[0].Config; !maps.Equal(got, want) {
		t.Errorf("config of the deploy: %+v, want %+v", got, want)
	}
	if got := st.History[1].Config; !maps.Equal(got, want) {
		t.Errorf("a deploy without config flags runs with %+v, want the live version's %+v", got, want)
	}
}
