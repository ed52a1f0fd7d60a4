package main

import (
	"strings"
	"testing"
)

func TestStatusCommand(t *testing.T) {
	b, url := startAdmin(t)
	stdout, stderr, code := run(t, "", "status", "--admin", url)
	if want := "{\n  \"events\": 0,\n  \"node\": \"node-1\",\n  \"steps\": 2\n}\n"; code != 0 || stdout != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", code, stdout, want, stderr)
	}
	_, stderr, code = run(t, "", "status", "--admin", strings.TrimPrefix(url, "http://")+"/nope")
	if code != 1 || !strings.Contains(stderr, "eddy: status: not_found: no such route") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b.Calls() != 1 {
		t.Fatalf("%d backend calls", b.Calls())
	}
}
