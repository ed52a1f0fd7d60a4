package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrapDropsTheCallsStateWrites runs `eddy test --state` with a counter
// that traps on one record after writing its state. The host bisects the
// batch and re-runs its halves; the writes of the calls that trapped must
// not count, so the other records count 1, 2, 3 (issue 14, item 5: they
// counted 7, 10, 12).
func TestTrapDropsTheCallsStateWrites(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	lines := []string{
		`{"key":"alice","value":"a"}`,
		`{"key":"alice","value":"a"}`,
		`{"key":"alice","value":"trap"}`,
		`{"key":"alice","value":"a"}`,
		`{"key":"bob","value":"a"}`,
		`{"key":"alice","value":"a"}`,
	}
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "", "test", td("go/trapcount.wasm"), "--state", "--input", in)
	want := `{"key":"alice","value":1,"timestamp":0}
{"key":"alice","value":2,"timestamp":0}
{"key":"alice","value":3,"timestamp":0}
{"key":"bob","value":1,"timestamp":0}
{"key":"alice","value":4,"timestamp":0}
`
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if code != 1 || !strings.Contains(stderr, "line 3: function trapcount (process): trap") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and line 3 reported as a trap", code, stderr)
	}
}
