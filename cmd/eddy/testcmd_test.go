package main

import (
	"strings"
	"testing"
)

// TestAggregateKeyWithNoFoldedRecordHasNoResult: a key all of whose records
// the function refused has no accumulator (ABI.md 5.4: the stored one is
// kept, and there is none), so eddy test prints no result for it; a key
// whose records failed in a later batch keeps the result of the earlier
// ones.
func TestAggregateKeyWithNoFoldedRecordHasNoResult(t *testing.T) {
	in := `{"key":"a","value":2}` + "\n" + `{"key":"b","value":"x"}` + "\n" + `{"key":"a","value":4}` + "\n" +
		`{"key":"b","value":"y"}` + "\n" + `{"key":"a","value":"z"}` + "\n"
	for _, batch := range []string{"1024", "1", "2"} {
		stdout, stderr, code := run(t, in, "test", "--batch", batch, td("go/stats.wasm"))
		want := `{"key":"a","value":{"count":2,"sum":6,"avg":3},"timestamp":0}` + "\n"
		if code != 1 || stdout != want || !strings.Contains(stderr, "3 of 5 records failed") {
			t.Fatalf("--batch %s: exit %d, stdout %q, want %q; stderr:\n%s", batch, code, stdout, want, stderr)
		}
	}
}
