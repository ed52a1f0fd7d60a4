package main

import (
	"strings"
	"testing"
)

// TestFunctionFlagRanges: the flags that match numbers of the pipeline file
// have the same ranges, and an error naming the flag, the value and the
// range (docs/pipeline.md).
func TestFunctionFlagRanges(t *testing.T) {
	wasm := td("wat/dropall.wasm")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"memory limit too large", []string{"test", "--memory-limit", "4294967296", wasm}, "--memory-limit: must be between 65536 and 2147418112 bytes, got 4294967296"},
		{"memory limit negative", []string{"inspect", "--memory-limit", "-1", wasm}, "--memory-limit: must be between 65536 and 2147418112 bytes, got -1"},
		{"timeout too long", []string{"test", "--timeout", "1000h", wasm}, "--timeout: must be between 1ms and 10m0s, got 1000h0m0s"},
		{"timeout zero", []string{"conformance", "--timeout", "0", wasm}, "--timeout: must be between 1ms and 10m0s, got 0s"},
		{"batch too large", []string{"test", "--batch", "1000000000", wasm}, "--batch: must be between 1 and 100000, got 1000000000"},
		{"calls too many", []string{"conformance", "--calls", "1000000000000", wasm}, "--calls: must be between 1 and 1000000, got 1000000000000"},
		{"broker partitions", []string{"broker", "--port", "0", "--partitions", "1000000000"}, "--partitions: must be between 1 and 10000, got 1000000000"},
		{"bench partitions", []string{"bench", "nexmark", "--partitions", "0"}, "--partitions: must be between 1 and 10000, got 0"},
		{"bench gen partitions", []string{"bench", "nexmark", "gen", "--partitions", "-4"}, "--partitions: must be between 1 and 10000, got -4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q, want it to say %q", code, stderr, tc.want)
			}
		})
	}
}
