package host

import (
	"fmt"
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
		{"bad kind", strings.Replace(goodPipeline, "kind: map", "kind: mapp", 1), []string{`p.yaml:6: steps[0].kind: must be map, filter, flat_map, key_by, join or aggregate, got "mapp"`}},
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

const keyedPipeline = `name: bids
source: {topics: [bids, more-bids]}
steps:
  - {name: clean, kind: map, function: upper.wasm}
  - {name: by-bidder, kind: key_by, field: bidder.id}
  - {name: tag, kind: map, function: upper.wasm}
  - name: prices
    kind: aggregate
    function: pricestats.wasm
    time_function: wordkey.wasm
    window: {type: tumbling, size: 10s}
sink: {topic: out}
delivery: exactly_once
`

func TestStagesSplitBeforeTheStatefulStepAfterAKeyBy(t *testing.T) {
	p, err := ParsePipeline("p.yaml", []byte(keyedPipeline))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Stages()
	want := []Stage{
		{Inputs: []string{"bids", "more-bids"}, From: 0, To: 3, Output: "bids-by-bidder-repartition"},
		{Inputs: []string{"bids-by-bidder-repartition"}, From: 3, To: 4, Output: "out", Last: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stages\n got %+v\nwant %+v", got, want)
	}
	// Without a stateful step after it, a key_by step only rekeys.
	p, err = ParsePipeline("p.yaml", []byte(goodPipeline+"")) // one stage
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stages(); len(st) != 1 || !st[0].Last || st[0].To != 1 {
		t.Fatalf("stages of a stateless pipeline: %+v", st)
	}
	stateless := strings.Replace(keyedPipeline, "  - name: prices\n    kind: aggregate\n    function: pricestats.wasm\n    time_function: wordkey.wasm\n    window: {type: tumbling, size: 10s}\n", "", 1)
	p, err = ParsePipeline("p.yaml", []byte(stateless))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stages(); len(st) != 1 || st[0].Output != "out" {
		t.Fatalf("stages of a key_by without state after it: %+v", st)
	}
}

func TestKeyByAndTimeErrors(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"key_by without field or function", "kind: key_by, field: bidder.id", "kind: key_by", "steps[1].field: a key_by step needs a field"},
		{"key_by with both", "kind: key_by, field: bidder.id", "kind: key_by, field: a, function: k.wasm", "steps[1].field: give field or function, not both"},
		{"empty path segment", "field: bidder.id", "field: bidder..id", `steps[1].field: "bidder..id": empty path segment`},
		{"field on a map", "kind: map, function: upper.wasm}", "kind: map, function: upper.wasm, field: x}", "steps[0].field: only a key_by step has a field"},
		{"bad time", "time_function: wordkey.wasm", "time: wall", `steps[3].time: must be event, log_append or processing, got "wall"`},
		{"time field and function", "time_function: wordkey.wasm", "time_function: wordkey.wasm\n    time_field: ts", "give time_field or time_function, not both"},
		{"function with processing time", "time_function: wordkey.wasm", "time_function: wordkey.wasm\n    time: processing", "time_field and time_function need time: event"},
		{"time on a map", "kind: map, function: upper.wasm}", "kind: map, function: upper.wasm, time: processing}", "steps[0].kind: time, time_field, time_function and emit belong to aggregate steps"},
		{"state at most once", "delivery: exactly_once", "delivery: at_most_once", "steps[3].kind: this step keeps state: it needs delivery at_least_once or exactly_once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(keyedPipeline, tc.old, tc.new, 1)
			if src == keyedPipeline {
				t.Fatalf("%q not in the pipeline", tc.old)
			}
			_, err := ParsePipeline("p.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFieldKey(t *testing.T) {
	tests := []struct{ path, value, key, err string }{
		{"user", `{"user":"ann"}`, "ann", ""},
		{"user.id", `{"user":{"id":42}}`, "42", ""},
		{"user.id", `{"user":{"id": {"a" : 1}}}`, `{"a":1}`, ""},
		{"user", `{"user":"\u00e9"}`, "é", ""},
		{"user", `{"user":null}`, "", "field user is null"},
		{"user.id", `{"user":"ann"}`, "", "user is not a JSON object"},
		{"user", `{"name":"ann"}`, "", "field user is missing"},
		{"user", `not json`, "", "the value is not a JSON object"},
	}
	for _, tc := range tests {
		f, err := newFieldKey(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		k, err := f.key(nil, []byte(tc.value))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s of %s: error %v, want %q", tc.path, tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || string(k) != tc.key {
			t.Errorf("%s of %s: %q, %v; want %q", tc.path, tc.value, k, err, tc.key)
		}
	}
}
