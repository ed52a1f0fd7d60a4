package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/scaffold"
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

// fileRef matches what a README names as a file of its project: a relative
// path ending in the extension of a kind of file a project has; dirRef a
// folder, in backquotes and ending in /.
var (
	fileRef = regexp.MustCompile(`(?:^|[\s(` + "`" + `'"])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:jsonl|json|wasm|rs|c|h|ts|go|mod|sh|md|toml|txt|yaml))\b`)
	dirRef  = regexp.MustCompile("`((?:[\\w.-]+/)+)`")
)

// TestNewProjectREADMEsNameTheirFiles: every file and folder the README of
// a new project names is in the project, in every language (a bare name
// anywhere in it, a path at that path), but for what its build makes: the
// module and, for AssemblyScript, node_modules/.
func TestNewProjectREADMEsNameTheirFiles(t *testing.T) {
	for _, lang := range scaffold.Languages() {
		t.Run(lang, func(t *testing.T) {
			name := "fn_" + lang
			dir := filepath.Join(t.TempDir(), name)
			if _, stderr, code := run(t, "", "new", "--lang", lang, "--dir", dir, name); code != 0 {
				t.Fatalf("eddy new: exit %d: %s", code, stderr)
			}
			built := map[string]bool{name + ".wasm": true, "node_modules/": true}
			have := map[string]bool{} // base names of files and folders
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil {
					have[d.Name()] = true
				}
				return err
			})
			readme := mustRead(t, filepath.Join(dir, "README.md"))
			var named []string
			for _, m := range fileRef.FindAllStringSubmatch(readme, -1) {
				named = append(named, m[1])
			}
			for _, m := range dirRef.FindAllStringSubmatch(readme, -1) {
				named = append(named, m[1])
			}
			slices.Sort(named)
			named = slices.Compact(named)
			if !slices.Contains(named, "sample.jsonl") {
				t.Errorf("the README does not name sample.jsonl, the project's records to try (named: %q)", named)
			}
			for _, n := range named {
				if built[n] {
					continue
				}
				if !strings.Contains(strings.TrimSuffix(n, "/"), "/") {
					if !have[strings.TrimSuffix(n, "/")] {
						t.Errorf("the README names %s; the project has none", n)
					}
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(n))); err != nil {
					t.Errorf("the README names %s; the project has none", n)
				}
			}
			t.Logf("the README names %q", named)
		})
	}
}
