package scaffold

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"
)

// The Go SDK is its own module (sdk/go/go.mod), and go:embed cannot reach
// into another module, so `eddy new --lang go` copies it from a snapshot:
// gosdk.txtar, made by `go generate ./scaffold` and checked by a test.
//
//go:generate go run ./internal/snapshot -o gosdk.txtar ../sdk/go

// Snapshot returns the files of the SDK in dir that a project needs (sources,
// go.mod, README; no tests) as a txtar archive: for each file, a line
// "-- path --" followed by its content.
func Snapshot(dir string) ([]byte, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if strings.HasSuffix(name, "_test.go") || !(strings.HasSuffix(name, ".go") || name == "go.mod" || name == "README.md") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var b bytes.Buffer
	b.WriteString("Snapshot of sdk/go for eddy new; regenerate with go generate ./scaffold.\n")
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		if bytes.Contains(src, []byte("\n-- ")) {
			return nil, fmt.Errorf("%s: contains a line starting with \"-- \", which the archive format cannot hold", f)
		}
		fmt.Fprintf(&b, "-- %s --\n", f)
		b.Write(src)
		if len(src) > 0 && src[len(src)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

// parseSnapshot reads a Snapshot archive into a file system.
func parseSnapshot(a []byte) (fs.FS, error) {
	m := fstest.MapFS{}
	var name string
	var body []byte
	flush := func() {
		if name != "" {
			m[name] = &fstest.MapFile{Data: body, Mode: 0o644}
		}
	}
	for _, line := range bytes.SplitAfter(a, []byte("\n")) {
		if n, ok := bytes.CutPrefix(line, []byte("-- ")); ok && bytes.HasSuffix(n, []byte(" --\n")) {
			flush()
			name, body = string(bytes.TrimSuffix(n, []byte(" --\n"))), nil
			continue
		}
		if name != "" {
			body = append(body, line...)
		}
	}
	flush()
	if len(m) == 0 {
		return nil, fmt.Errorf("snapshot holds no files")
	}
	return m, nil
}
