package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newLanguages are the languages whose generated project must build with its
// own build.sh and pass eddy conformance.
var newLanguages = []string{"go", "rust", "c", "assemblyscript"}

func TestNewProjectBuildsAndConforms(t *testing.T) {
	for _, lang := range newLanguages {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fn_"+lang)
			stdout, stderr, code := run(t, "", "new", "--lang", lang, "--dir", dir, "fn_"+lang)
			if code != 0 {
				t.Fatalf("eddy new: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "./build.sh") {
				t.Fatalf("eddy new says:\n%s", stdout)
			}
			build := exec.Command("bash", "build.sh")
			build.Dir = dir
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build.sh: %v\n%s", err, out)
			}
			wasm := filepath.Join(dir, "fn_"+lang+".wasm")
			if _, err := os.Stat(wasm); err != nil {
				t.Fatalf("build.sh did not produce %s", wasm)
			}
			stdout, stderr, code = run(t, "", "conformance", "--calls", "20000", wasm)
			if code != 0 {
				t.Fatalf("conformance: exit %d\n%s\n%s", code, stdout, stderr)
			}
			stdout, _, code = run(t, "", "test", wasm, "--input", filepath.Join(dir, "sample.jsonl"))
			if code != 0 || !strings.Contains(stdout, "HELLO EDDY") {
				t.Fatalf("eddy test on the new project: exit %d\n%s", code, stdout)
			}
		})
	}
	_, stderr, code := run(t, "", "new", "--lang", "cobol", "--dir", filepath.Join(t.TempDir(), "x"), "x")
	if code != 1 || !strings.Contains(stderr, `language "cobol": not one of`) {
		t.Fatalf("unknown language: exit %d: %s", code, stderr)
	}
}
