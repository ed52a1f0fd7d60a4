// Command bundlegen writes bundled/guests.tar.zst, the guest modules the
// eddy binary carries (package eddy), from testdata/: a tar of the files
// eddy.BundledFiles names, sorted, with no times or owners, compressed by
// zstd with a window over the whole tar. Run it from the repository root
// after rebuilding the guests (make guests runs it).
package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/klauspost/compress/zstd"

	eddy "github.com/eddy-streams/eddy"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bundlegen:", err)
		os.Exit(1)
	}
}

func run() error {
	var names []string
	for _, p := range eddy.BundledFiles {
		m, err := filepath.Glob(filepath.Join("testdata", filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		for _, f := range m {
			rel, _ := filepath.Rel("testdata", f)
			names = append(names, filepath.ToSlash(rel))
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return fmt.Errorf("no modules under testdata/ (run from the repository root)")
	}
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(n)))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(zstd.MaxWindowSize>>2),
		zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	out := enc.EncodeAll(tarball.Bytes(), nil)
	if err := os.WriteFile(filepath.Join("bundled", "guests.tar.zst"), out, 0o644); err != nil {
		return err
	}
	fmt.Printf("bundled/guests.tar.zst: %d modules, %d bytes from %d\n", len(names), len(out), tarball.Len())
	return nil
}
