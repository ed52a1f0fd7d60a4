package eddy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy"
)

// TestBundleUpToDate checks that bundled/guests.tar.zst holds exactly the
// modules of testdata/ that eddy.BundledFiles names, byte for byte (after a
// guest is rebuilt: go run ./internal/bundlegen).
func TestBundleUpToDate(t *testing.T) {
	var want []string
	for _, p := range eddy.BundledFiles {
		m, _ := filepath.Glob(filepath.Join("testdata", filepath.FromSlash(p)))
		for _, f := range m {
			rel, _ := filepath.Rel("testdata", f)
			want = append(want, filepath.ToSlash(rel))
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	var got []string
	err := eddy.ReadGuests(func(name string, wasm []byte) error {
		got = append(got, name)
		disk, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s is bundled but not in testdata/: %v", name, err)
		} else if !bytes.Equal(disk, wasm) {
			t.Errorf("bundled %s differs from testdata/%s: run go run ./internal/bundlegen", name, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bundled %v,\nwant %v: run go run ./internal/bundlegen", got, want)
	}
	for _, need := range []string{"go/filter.wasm", "go/upper.wasm", "go/nx-q1.wasm", "c/nx-q1.wasm"} {
		if !slices.Contains(got, need) {
			t.Errorf("%s is not bundled", need)
		}
	}
}
