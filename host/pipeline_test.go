package host

import (
	"strings"
	"testing"
	"time"
)

const goodPipeline = `name: orders-upper
source:
  topics: [orders]
steps:
  - name: upper
    kind: map
    function: ../testdata/go/upper.wasm
sink:
  topic: orders-out
delivery: exactly_once
limits:
  memory_limit: 64MiB
`

func TestParsePipelineDefaults(t *testing.T) {
	p, err := ParsePipeline("p.yaml", []byte(goodPipeline))
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Start != "earliest" || p.DeadLetter.Topic != "orders-upper-dlq" || p.CommitInterval != 100*time.Millisecond ||
		p.BatchSize != DefaultBatchSize || p.Limits.MemoryLimit != 64<<20 || p.Limits.Overload != OverloadBlock || p.Delivery != ExactlyOnce {
		t.Fatalf("defaults: %+v", p)
	}
}

func TestParsePipelineErrorsNameFieldAndLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"unknown field", strings.Replace(goodPipeline, "delivery:", "delivry:", 1), []string{"p.yaml:10: delivry: field delivry not found"}},
		{"bad kind", strings.Replace(goodPipeline, "kind: map", "kind: mapp", 1), []string{`p.yaml:6: steps[0].kind: must be map, filter, flat_map or aggregate, got "mapp"`}},
		{"missing function", strings.Replace(goodPipeline, "    function: ../testdata/go/upper.wasm\n", "", 1), []string{"p.yaml:5: steps[0].function: is required"}},
		{"bad delivery", strings.Replace(goodPipeline, "exactly_once", "twice", 1), []string{`p.yaml:10: delivery: must be at_most_once, at_least_once or exactly_once, got "twice"`}},
		{"bad size", strings.Replace(goodPipeline, "64MiB", "lots", 1), []string{`size "lots"`}},
		{"sink is source", strings.Replace(goodPipeline, "orders-out", "orders", 1), []string{"p.yaml:9: sink.topic", "would read its own output"}},
		{"several problems at once", "name: x\nsource:\n  topics: []\nsteps: []\nsink:\n  topic: y\nbatch_size: -1\n",
			[]string{"p.yaml:3: source.topics: name at least one topic", "p.yaml:4: steps: name at least one step", "p.yaml:7: batch_size: must be between"}},
		{"bad duration", strings.Replace(goodPipeline, "delivery: exactly_once", "commit_interval: soon", 1), []string{"p.yaml:10: commit_interval: cannot unmarshal !!str `soon`", "want a duration"}},
		{"sampling without rate", goodPipeline + "  overload: sample\n", []string{"p.yaml:11: limits.sample_rate: must be in (0, 1]"}},
		{"empty", "", []string{"the file is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePipeline("p.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
