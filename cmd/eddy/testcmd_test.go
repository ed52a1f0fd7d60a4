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

// TestTestFiresTimers: under --state, eddy test runs a function with
// timers record by record, firing the event-time timers the watermark of
// the records before each has passed, and every timer left when the input
// ends; without --state the records are refused (the function has no
// store).
func TestTestFiresTimers(t *testing.T) {
	in := `{"key":"a","value":"x","timestamp":1000}` + "\n" + `{"key":"b","value":"x","timestamp":1500}` + "\n" +
		`{"key":"c","value":"x","timestamp":3000}` + "\n" + `{"key":"a","value":"x","timestamp":3500}` + "\n"
	stdout, stderr, code := run(t, in, "test", "--state", td("go/timeout.wasm"))
	// a's timer at 2000 and b's at 2500 fire before a's second record
	// (the watermark is 3000 then); c's and a's new one at the end.
	want := `{"key":"a","value":1000,"timestamp":2000}` + "\n" + `{"key":"b","value":1500,"timestamp":2500}` + "\n" +
		`{"key":"c","value":3000,"timestamp":4000}` + "\n" + `{"key":"a","value":3500,"timestamp":4500}` + "\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", code, stdout, want, stderr)
	}
	_, stderr, code = run(t, in, "test", td("go/timeout.wasm"))
	if code != 1 || !strings.Contains(stderr, "4 of 4 records failed") {
		t.Fatalf("without --state: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestTestConfig: eddy test --config gives the function config entries;
// a malformed one is refused before anything runs.
func TestTestConfig(t *testing.T) {
	in := `{"key":"a","value":"x"}` + "\n"
	stdout, stderr, code := run(t, in, "test", "--config", "prefix=p-", "--config", "other=1", td("go/prefix.wasm"))
	if code != 0 || stdout != `{"key":"a","value":"p-x","timestamp":0}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, stderr, code = run(t, in, "test", "--config", "prefix", td("go/prefix.wasm")); code == 0 || !strings.Contains(stderr, `--config "prefix": want name=value`) {
		t.Fatalf("a config without =: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestTestSaysToPassState: the failures of a module that uses keyed state
// or timers, run without --state, end with the advice to pass --state,
// naming the calls; a module without them is not given that advice.
func TestTestSaysToPassState(t *testing.T) {
	in := `{"key":"a","value":"500","timestamp":1000}` + "\n" // remind: a reminder 500ms on
	for _, tc := range []struct{ module, calls string }{
		{"go/counter.wasm", "eddy.state_get, eddy.state_put"},
		{"go/remind.wasm", "eddy.timer_set"},
	} {
		_, stderr, code := run(t, in, "test", td(tc.module))
		if want := "1 of 1 records failed; the module uses keyed state or timers (it imports " + tc.calls +
			"): run it with --state to give it an in-memory store\n"; code != 1 || !strings.HasSuffix(stderr, want) {
			t.Fatalf("%s without --state: exit %d, stderr:\n%s\nwant it to end with:\n%s", tc.module, code, stderr, want)
		}
		if _, stderr, code := run(t, in, "test", "--state", td(tc.module)); code != 0 {
			t.Fatalf("%s with --state: exit %d, stderr:\n%s", tc.module, code, stderr)
		}
	}
	if _, stderr, _ := run(t, in, "test", td("wat/trap.wasm")); !strings.Contains(stderr, "1 of 1 records failed") || strings.Contains(stderr, "--state") {
		t.Fatalf("a module without state calls:\n%s", stderr)
	}
}
