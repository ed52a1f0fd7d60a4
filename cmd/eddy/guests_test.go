package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// languages are the guest languages whose reference functions must all
// behave identically: testdata/<lang>/<guest>.wasm, built from guests/<lang>.
// EDDY_GUEST_LANGS (comma-separated) replaces the list while an SDK is being
// written.
var languages = func() []string {
	if env := os.Getenv("EDDY_GUEST_LANGS"); env != "" {
		return strings.Split(env, ",")
	}
	return []string{"go", "rust", "c", "assemblyscript"}
}()

// TestGuestsThroughCLI runs each reference guest, in every language, with its
// bundled sample input and compares stdout, stderr and the exit status with
// one golden file per case in testdata/golden (rewrite them from the Go
// guests with -update, then review the diff). Every language must produce
// exactly the same output.
func TestGuestsThroughCLI(t *testing.T) {
	tests := []struct {
		name  string
		guest string
		input string
		flags []string
	}{
		{"upper", "upper", "words", nil},
		{"passthrough", "passthrough", "words", nil},
		{"filter", "filter", "orders", nil},
		{"split", "split", "words", nil},
		{"stats", "stats", "amounts", nil},
		{"counter", "counter", "words", []string{"--state"}},
		{"counter-without-state", "counter", "words", nil},
		{"poison", "poison", "poison", nil},
		{"poison-batch-1", "poison", "poison", []string{"--batch", "1"}},
		{"joiner", "joiner", "joins", nil},
		{"wordkey-key", "wordkey", "words", []string{"--kind", "key"}},
		{"wordkey-timestamp", "wordkey", "events", []string{"--kind", "timestamp"}},
	}
	for _, lang := range languages {
		for _, tc := range tests {
			t.Run(lang+"/"+tc.name, func(t *testing.T) {
				wasm := td(lang + "/" + tc.guest + ".wasm")
				args := append([]string{"test", wasm, "--input", td("samples/" + tc.input + ".jsonl")}, tc.flags...)
				stdout, stderr, code := run(t, "", args...)
				header := strings.Join(append([]string{"test", tc.guest + ".wasm", "--input", tc.input + ".jsonl"}, tc.flags...), " ")
				got := fmt.Sprintf("$ eddy %s\nexit %d\n--- stdout\n%s--- stderr\n%s", header, code, stdout, stripLogs(stderr))
				golden := td("golden/" + tc.name + ".txt")
				if *update && lang == "go" {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/eddy -run TestGuestsThroughCLI -update)", err)
				}
				if got != string(want) {
					t.Fatalf("output differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

// TestGuestCrashIsIsolated runs the poison guest on a record that makes user
// code crash. SDKs that can catch the crash report it as PANIC (code 3);
// others trap, and the host isolates the record. Either way the other
// records are processed.
func TestGuestCrashIsIsolated(t *testing.T) {
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			stdout, stderr, code := run(t, "", "test", td(lang+"/poison.wasm"), "--input", td("samples/crash.jsonl"))
			if code != 1 || stdout != "{\"key\":\"a\",\"value\":\"FINE\",\"timestamp\":1}\n{\"key\":\"f\",\"value\":\"LAST\",\"timestamp\":6}\n" {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "line 2: function poison (process): panic (code 3)") && !strings.Contains(stderr, "line 2: function poison (process): trap") {
				t.Fatalf("stderr does not report line 2 as a panic or a trap:\n%s", stderr)
			}
		})
	}
}

// stripLogs drops structured log lines (they carry times) from stderr.
func stripLogs(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "time=") && l != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
