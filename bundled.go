// Package eddy carries the prebuilt guest modules the eddy binary's own
// commands run, so that they work from any directory: the demo's functions
// (eddy dev) and the Nexmark queries' (eddy bench nexmark). They are the
// fixtures of testdata/ (built from guests/ by make guests), kept in
// bundled/guests.tar.zst: the Go modules share most of their bytes (the Go
// runtime), so one zstd stream with a long window holds 80 MB of them in
// 3 MB. `go run ./internal/bundlegen` writes it again from testdata/, and a
// test checks that it is up to date.
package eddy

import (
	"archive/tar"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// BundledFiles are the patterns, under testdata/, of the modules the
// bundle holds.
var BundledFiles = []string{
	"go/filter.wasm", "go/upper.wasm", "go/passthrough.wasm", "go/joiner.wasm", "go/nx-count.wasm", "go/nx-*.wasm",
	"c/nx-q1.wasm", "c/nx-q2.wasm", "c/passthrough.wasm",
}

//go:embed bundled/guests.tar.zst
var bundle []byte

// Bounds on what WriteGuests unpacks (the bundle is the binary's own, but
// a bound costs nothing).
const (
	maxBundledFile  = 64 << 20
	maxBundledTotal = 512 << 20
)

// ReadGuests calls fn with each bundled module: its path under testdata/
// (go/upper.wasm, c/nx-q1.wasm, …) and its bytes.
func ReadGuests(fn func(name string, wasm []byte) error) error {
	dec, err := zstd.NewReader(bytes.NewReader(bundle), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBundledTotal))
	if err != nil {
		return fmt.Errorf("bundled guests: %w", err)
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bundled guests: %w", err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(name) || h.Size > maxBundledFile {
			return fmt.Errorf("bundled guests: unexpected entry %q", h.Name)
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxBundledFile))
		if err != nil {
			return fmt.Errorf("bundled guests: %s: %w", name, err)
		}
		if err := fn(name, b); err != nil {
			return err
		}
	}
}

// WriteGuests writes the bundled modules into dir in testdata/'s layout
// (dir/go/upper.wasm, …), for commands whose pipelines name functions by
// path, and returns dir.
func WriteGuests(dir string) (string, error) {
	err := ReadGuests(func(name string, wasm []byte) error {
		out := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, wasm, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("writing the bundled guest modules: %w", err)
	}
	return dir, nil
}
