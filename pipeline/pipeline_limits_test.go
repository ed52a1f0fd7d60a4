package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParsePipelineRefusesHostileNumbers gives every number, list and name of
// a pipeline file a value out of its range: each is refused at load with an
// error naming the field, the value and the range (docs/pipeline.md).
func TestParsePipelineRefusesHostileNumbers(t *testing.T) {
	limits := func(l string) string { return goodPipeline + "  " + l + "\n" }
	window := func(w string) string {
		return strings.Replace(goodPipeline, "    kind: map\n", "    kind: aggregate\n    window: "+w+"\n", 1)
	}
	steps := func(n int) string {
		var b strings.Builder
		b.WriteString("name: p\nsource: {topics: [in]}\nsink: {topic: out}\nsteps:\n")
		for range n {
			b.WriteString("  - {kind: map, function: f.wasm}\n")
		}
		return b.String()
	}
	// Ten levels of ten aliases each: 10^10 steps once expanded.
	var laughs strings.Builder
	laughs.WriteString("name: p\nsource: {topics: [in]}\nsink: {topic: out}\nx0: &x0 {kind: map, function: f.wasm}\n")
	for i := 1; i <= 10; i++ {
		laughs.WriteString(fmt.Sprintf("x%d: &x%d [", i, i))
		for j := range 10 {
			if j > 0 {
				laughs.WriteString(", ")
			}
			laughs.WriteString(fmt.Sprintf("*x%d", i-1))
		}
		laughs.WriteString("]\n")
	}
	laughs.WriteString("steps: *x10\n")
	tableJoin := func(global, extra string) string {
		return "name: p\nsource: {topics: [in]}\nsink: {topic: out}\ntables: [{name: t, topic: t, global: " + global +
			"}]\nsteps: [{kind: join, table: t, " + extra + "}]\n"
	}
	var typeErrors strings.Builder
	typeErrors.WriteString("name: p\nsource: {topics: [in]}\nsink: {topic: out}\nsteps:\n")
	for range 200 {
		typeErrors.WriteString("  - {kind: [map], function: f.wasm}\n")
	}
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"queue size 1e14", limits("queue_size: 1e14"), "p.yaml:13: limits.queue_size: must be between 1 and 1024, got 100000000000000"},
		{"queue size 1e9", limits("queue_size: 1e9"), "limits.queue_size: must be between 1 and 1024, got 1000000000"},
		{"negative queue size", limits("queue_size: -1"), "limits.queue_size: must be between 1 and 1024, got -1"},
		{"memory limit wraps", strings.Replace(goodPipeline, "64MiB", "17179869184GiB", 1), `size "17179869184GiB": too large`},
		{"memory limit beyond int64", strings.Replace(goodPipeline, "64MiB", "99999999999999999999", 1), `size "99999999999999999999": too large`},
		{"memory limit too large", strings.Replace(goodPipeline, "64MiB", "4GiB", 1), "limits.memory_limit: must be between 64KiB and 2097088KiB (2147418112 bytes, just under 2GiB), got 4GiB"},
		{"memory limit too small", strings.Replace(goodPipeline, "64MiB", "1KiB", 1), "got 1KiB"},
		{"sample rate nan", limits("overload: sample\n  sample_rate: .nan"), "limits.sample_rate: must be in (0, 1], got NaN"},
		{"sample rate inf", limits("overload: sample\n  sample_rate: .inf"), "limits.sample_rate: must be in (0, 1], got +Inf"},
		{"sample rate nan without sampling", limits("sample_rate: .nan"), "limits.sample_rate: must be in (0, 1], got NaN"},
		{"call timeout too long", limits("call_timeout: 1000h"), "limits.call_timeout: must be between 1ms and 10m0s, got 1000h0m0s"},
		{"call timeout negative", limits("call_timeout: -1s"), "limits.call_timeout: must be between 1ms and 10m0s, got -1s"},
		{"batch size 1e9", strings.Replace(goodPipeline, "delivery:", "batch_size: 1e9\ndelivery:", 1), "batch_size: must be between 1 and 100000, got 1000000000"},
		{"commit interval too long", strings.Replace(goodPipeline, "delivery:", "commit_interval: 1000h\ndelivery:", 1), "commit_interval: must be between 1ms and 1h0m0s, got 1000h0m0s"},
		{"257 steps", steps(257), "p.yaml:4: steps: at most 256, got 257"},
		{"500,000 steps", steps(500000), "the file is larger than 1048576 bytes"},
		{"billion laughs", laughs.String(), "the file has more than 50000 YAML nodes"},
		{"alias of itself", "name: &a [*a]\n", "p.yaml: line 1: alias *a refers to a node that contains it"},
		{"errors are bounded", typeErrors.String(), "and 180 more errors"},
		{"long pipeline name", strings.Replace(goodPipeline, "orders-upper", strings.Repeat("n", 101), 1), "name: at most 100 characters, got 101"},
		{"long step name", strings.Replace(goodPipeline, "name: upper", "name: "+strings.Repeat("s", 65), 1), "steps[0].name: at most 64 characters, got 65"},
		{"step name with a slash", strings.Replace(goodPipeline, "name: upper", "name: a/b", 1), `steps[0].name: "a/b": use letters, digits`},
		{"step name dot dot", strings.Replace(goodPipeline, "name: upper", `name: ".."`, 1), `steps[0].name: "..": use letters`},
		{"topic dot", strings.Replace(goodPipeline, "orders-out", `"."`, 1), `sink.topic: "." is not a valid topic name`},
		{"late topic", goodPipeline + "late: {topic: 'a b'}\n", `late.topic: "a b" is not a valid topic name`},
		{"long function path", strings.Replace(goodPipeline, "../testdata/go/upper.wasm", strings.Repeat("f", 5000), 1), "steps[0].function: at most 4096 bytes, got 5000"},
		{"window grace", window("{type: tumbling, size: 1s, grace: 1000000h}"), "steps[0].window.grace: at most 87600h0m0s (10 years), got 1000000h0m0s"},
		{"window size", window("{type: tumbling, size: 2000000h}"), "steps[0].window.size: at most 87600h0m0s"},
		{"windows per record", window("{type: hopping, size: 24h, advance: 1ms}"), "steps[0].window.advance: size/advance is the number of windows each record goes to: at most 10000, got 86400000"},
		{"window count", window("{type: global, count: 1e12}"), "steps[0].window.count: at most 1073741824, got 1000000000000"},
		{"max_idle too long", tableJoin("false", "max_idle: 2h"), "steps[0].max_idle: must be 0 to 1h0m0s, got 2h0m0s"},
		{"max_idle negative", tableJoin("false", "max_idle: -1s"), "steps[0].max_idle: must be 0 to 1h0m0s, got -1s"},
		{"max_idle of a global table", tableJoin("true", "max_idle: 1s"), "steps[0].max_idle: max_idle belongs to a join with a table that is not global"},
		{"65 tables", "name: p\nsource: {topics: [in]}\nsink: {topic: out}\nsteps: [{kind: map, function: f.wasm}]\ntables: [" +
			strings.Repeat("{name: t, topic: t},", 65) + "]\n", "tables: at most 64, got 65"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePipeline("p.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestLoadPipelineStopsReadingAtTheSizeLimit: a file larger than the limit
// is refused without being parsed.
func TestLoadPipelineStopsReadingAtTheSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(goodPipeline+"#"+strings.Repeat("x", MaxPipelineFileSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPipeline(path); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
}

func TestByteSizeStringRoundTrips(t *testing.T) {
	for _, s := range []string{"0", "1", "1023", "64KiB", "64MiB", "2GiB", "1000", "3KiB", "9223372036854775807"} {
		v, err := ParseByteSize(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.String(); got != s {
			t.Errorf("ParseByteSize(%q).String() = %q", s, got)
		}
	}
	for _, s := range []string{"8388608TiB", "8589934592GiB", "9223372036854775808", "9223372036854775807K"} {
		if v, err := ParseByteSize(s); err == nil {
			t.Errorf("ParseByteSize(%q) = %d, want an error", s, v)
		}
	}
}
