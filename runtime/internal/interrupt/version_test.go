package interrupt

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateVersion = flag.Bool("update-version", false, "rewrite testdata/version.golden with the current rewrites and Version")

// TestVersion keeps Version honest: the runtime caches rewritten modules
// under it, so a change to what Instrument produces must come with a new
// Version. testdata/version.golden holds the Version and the digest of the
// rewrite of some modules; when the rewrites differ, Version must differ
// too (then record the new ones with -update-version).
func TestVersion(t *testing.T) {
	var mods []string
	for _, pat := range []string{"testdata/*.wasm"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, m...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version %d\n", Version)
	n := 0
	for _, path := range mods {
		wasm, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Instrument(wasm)
		if err != nil {
			continue // the unsupported fixtures
		}
		sum := sha256.Sum256(m.Wasm)
		fmt.Fprintf(&b, "%s start=%v %s\n", filepath.ToSlash(path), m.Start, hex.EncodeToString(sum[:]))
		n++
	}
	if n < 3 {
		t.Fatalf("only %d modules instrumented", n)
	}
	golden := filepath.Join("testdata", "version.golden")
	if *updateVersion {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) == b.String() {
		return
	}
	wantVersion := strings.SplitN(string(want), "\n", 2)[0]
	if wantVersion == fmt.Sprintf("version %d", Version) {
		t.Fatalf("the rewrites of the test modules changed but Version is still %d: if Instrument changed, increment Version (cached rewrites would be reused); then, or if only the test modules were rebuilt, run go test -run TestVersion -update-version", Version)
	}
	t.Fatalf("Version is %d but %s records %s: run go test -run TestVersion -update-version (also when this package's testdata modules changed)", Version, golden, wantVersion)
}
