package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuestsThroughCLI runs each example guest with its bundled sample input
// and compares stdout, stderr and the exit status with golden files in
// testdata/golden (rewrite them with -update, then review the diff).
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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"test", td("go/" + tc.guest + ".wasm"), "--input", td("samples/" + tc.input + ".jsonl")}, tc.flags...)
			stdout, stderr, code := run(t, "", args...)
			got := fmt.Sprintf("$ eddy %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args[1:], " "), code, stdout, stripLogs(stderr))
			got = strings.ReplaceAll(got, td("")+"/", "testdata/")
			golden := td("golden/" + tc.name + ".txt")
			if *update {
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
