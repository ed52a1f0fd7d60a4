package scaffold

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestGoSDKSnapshotIsCurrent(t *testing.T) {
	want, err := Snapshot("../sdk/go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(goSDK, want) {
		t.Fatal("scaffold/gosdk.txtar is stale: run go generate ./scaffold")
	}
	sdk, err := GoSDK()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "README.md", "record.go", "exports_wasip1.go", "internal/msgpack/msgpack.go"} {
		b, err := fs.ReadFile(sdk, f)
		if err != nil {
			t.Fatalf("snapshot lacks %s: %v", f, err)
		}
		orig, _ := os.ReadFile(filepath.Join("../sdk/go", f))
		if !bytes.Equal(b, orig) {
			t.Fatalf("%s differs from sdk/go/%s after a round trip", f, f)
		}
	}
}

func TestNewWritesRenderedTemplateAndSDK(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	sdk := fstest.MapFS{"lib/x.txt": {Data: []byte("sdk file")}}
	files, err := New(dir, "go", "myfn", SDKs{"go": sdk})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("wrote %v", files)
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !bytes.HasPrefix(mod, []byte("module myfn\n")) {
		t.Fatalf("go.mod:\n%s", mod)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "eddy-sdk/lib/x.txt")); string(b) != "sdk file" {
		t.Fatalf("sdk copy: %q", b)
	}
	if st, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil || st.Mode()&0o100 == 0 {
		t.Fatalf("build.sh not executable: %v", err)
	}
	if _, err := New(dir, "go", "myfn", SDKs{"go": sdk}); err == nil {
		t.Fatal("wrote over an existing directory")
	}
	for _, bad := range []string{"My-Fn", "1fn", "", "a/b"} {
		if _, err := New(filepath.Join(t.TempDir(), "x"), "go", bad, SDKs{"go": sdk}); err == nil {
			t.Errorf("accepted name %q", bad)
		}
	}
	if _, err := New(filepath.Join(t.TempDir(), "x"), "cobol", "fn", nil); err == nil {
		t.Error("accepted language cobol")
	}
}
