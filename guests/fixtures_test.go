// Package guests holds the sources of the example and test functions, in one
// folder per language, each with a build script that writes the prebuilt
// modules under testdata/. Its test checks that the prebuilt modules are what
// the sources build to, wherever the toolchain is present.
package guests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rebuildAndCompare runs a build script into a temporary folder and compares
// every module it writes with the committed one, both ways.
func rebuildAndCompare(t *testing.T, script, committed string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("bash", script, out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	built, _ := filepath.Glob(filepath.Join(out, "*.wasm"))
	have, _ := filepath.Glob(filepath.Join(committed, "*.wasm"))
	if len(built) == 0 {
		t.Fatalf("%s built nothing", script)
	}
	if len(built) != len(have) {
		t.Errorf("%s builds %d modules, %s holds %d", script, len(built), committed, len(have))
	}
	for _, b := range built {
		name := filepath.Base(b)
		want, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Errorf("%s: not committed (run %s)", name, script)
			continue
		}
		got, _ := os.ReadFile(b)
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s differs from its source build: run %s", committed, name, script)
		}
	}
}

func TestWATFixturesAreUpToDate(t *testing.T) {
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Skip("wat2wasm not installed (apt-get install wabt); .ci/run installs it")
	}
	rebuildAndCompare(t, "wat/build.sh", "../testdata/wat")
}

// toolchainMatches compares the first line of a fixture folder's TOOLCHAIN
// file with what a command prints now: builds are reproducible for one
// toolchain version only.
func toolchainMatches(t *testing.T, dir string, cmd ...string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(dir, "TOOLCHAIN"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath(cmd[0]); err != nil {
		t.Skipf("%s not installed (scripts/install-toolchains.sh installs it)", cmd[0])
	}
	have, err := exec.Command(cmd[0], cmd[1:]...).Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	w := strings.SplitN(strings.TrimSpace(string(want)), "\n", 2)[0]
	h := strings.SplitN(strings.TrimSpace(string(have)), "\n", 2)[0]
	if w != h {
		t.Skipf("fixtures in %s were built with %q; this toolchain is %q", dir, w, h)
	}
}

func TestRustFixturesAreUpToDate(t *testing.T) {
	toolchainMatches(t, "../testdata/rust", "/usr/bin/rustc", "--version")
	rebuildAndCompare(t, "rust/build.sh", "../testdata/rust")
}

func TestCFixturesAreUpToDate(t *testing.T) {
	toolchainMatches(t, "../testdata/c", "clang-19", "--version")
	rebuildAndCompare(t, "c/build.sh", "../testdata/c")
}

func TestAssemblyScriptFixturesAreUpToDate(t *testing.T) {
	toolchainMatches(t, "../testdata/assemblyscript", "../sdk/assemblyscript/node_modules/.bin/asc", "--version")
	rebuildAndCompare(t, "assemblyscript/build.sh", "../testdata/assemblyscript")
}

func TestGoFixturesAreUpToDate(t *testing.T) {
	want, err := os.ReadFile("../testdata/go/TOOLCHAIN")
	if err != nil {
		t.Fatal(err)
	}
	have, err := exec.Command("go", "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// Go builds are reproducible for one toolchain version only.
	if strings.Fields(string(want))[2] != strings.Fields(string(have))[2] {
		t.Skipf("fixtures were built with %s; this is %s", bytes.TrimSpace(want), bytes.TrimSpace(have))
	}
	rebuildAndCompare(t, "go/build.sh", "../testdata/go")
}
