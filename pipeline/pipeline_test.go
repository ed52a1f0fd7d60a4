package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

func TestParsePipelineStandbyReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want int
	}{
		{"default", "", 0},
		{"zero", "standby_replicas: 0\n", 0},
		{"two", "standby_replicas: 2\n", 2},
		{"most", "standby_replicas: 9\n", MaxStandbyReplicas},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePipeline("p.yaml", []byte(goodPipeline+tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if p.StandbyReplicas != tc.want {
				t.Fatalf("standby_replicas %d, want %d", p.StandbyReplicas, tc.want)
			}
		})
	}
}

func TestParsePipelineWarmups(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lines    string
		replicas int
		lag      int64
	}{
		{"defaults", "", DefaultMaxWarmupReplicas, DefaultAcceptableRecoveryLag},
		{"zero replicas is the default", "max_warmup_replicas: 0\n", DefaultMaxWarmupReplicas, DefaultAcceptableRecoveryLag},
		{"set", "max_warmup_replicas: 5\nacceptable_recovery_lag: 250000\n", 5, 250000},
		{"only caught-up copies", "acceptable_recovery_lag: 0\n", DefaultMaxWarmupReplicas, 0},
		{"most", "max_warmup_replicas: 10000\nacceptable_recovery_lag: 1099511627776\n", MaxMaxWarmupReplicas, MaxAcceptableRecoveryLag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePipeline("p.yaml", []byte(goodPipeline+tc.lines))
			if err != nil {
				t.Fatal(err)
			}
			if p.WarmupReplicas() != tc.replicas || p.RecoveryLag() != tc.lag {
				t.Fatalf("max_warmup_replicas %d, acceptable_recovery_lag %d; want %d, %d", p.WarmupReplicas(), p.RecoveryLag(), tc.replicas, tc.lag)
			}
		})
	}
}

func TestParsePipelineErrorsNameFieldAndLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"unknown field", strings.Replace(goodPipeline, "delivery:", "delivry:", 1), []string{`p.yaml:10: delivry: unknown field; did you mean "delivery"?`}},
		{"bad kind", strings.Replace(goodPipeline, "kind: map", "kind: mapp", 1), []string{`p.yaml:6: steps[0].kind: must be map, filter, flat_map, branch, key_by, join or aggregate, got "mapp"; did you mean "map"?`}},
		{"missing function", strings.Replace(goodPipeline, "    function: ../testdata/go/upper.wasm\n", "", 1), []string{"p.yaml:5: steps[0].function: is required"}},
		{"bad delivery", strings.Replace(goodPipeline, "exactly_once", "twice", 1), []string{`p.yaml:10: delivery: must be at_most_once, at_least_once or exactly_once, got "twice"`}},
		{"bad size", strings.Replace(goodPipeline, "64MiB", "lots", 1), []string{`size "lots"`}},
		{"sink is source", strings.Replace(goodPipeline, "orders-out", "orders", 1), []string{"p.yaml:9: sink.topic", "would read its own output"}},
		{"several problems at once", "name: x\nsource:\n  topics: []\nsteps: []\nsink:\n  topic: y\nbatch_size: -1\n",
			[]string{"p.yaml:3: source.topics: name at least one topic", "p.yaml:4: steps: name at least one step", "p.yaml:7: batch_size: must be between"}},
		{"bad duration", strings.Replace(goodPipeline, "delivery: exactly_once", "commit_interval: soon", 1), []string{`p.yaml:10: commit_interval: want a duration such as 100ms, 1s or 2m, got "soon"`}},
		{"standby replicas out of range", strings.Replace(goodPipeline, "delivery: exactly_once", "standby_replicas: 10", 1), []string{"p.yaml:10: standby_replicas: must be between 0 and 9, got 10"}},
		{"standby replicas negative", strings.Replace(goodPipeline, "delivery: exactly_once", "standby_replicas: -1", 1), []string{"p.yaml:10: standby_replicas: must be between 0 and 9, got -1"}},
		{"warm-up replicas negative", strings.Replace(goodPipeline, "delivery: exactly_once", "max_warmup_replicas: -1", 1), []string{"p.yaml:10: max_warmup_replicas: must be between 1 and 10000 (0: the default, 2), got -1"}},
		{"warm-up replicas too many", strings.Replace(goodPipeline, "delivery: exactly_once", "max_warmup_replicas: 10001", 1), []string{"p.yaml:10: max_warmup_replicas: must be between 1 and 10000 (0: the default, 2), got 10001"}},
		{"recovery lag negative", strings.Replace(goodPipeline, "delivery: exactly_once", "acceptable_recovery_lag: -5", 1), []string{"p.yaml:10: acceptable_recovery_lag: must be between 0 and 1099511627776 records, got -5"}},
		{"recovery lag too large", strings.Replace(goodPipeline, "delivery: exactly_once", "acceptable_recovery_lag: 1099511627777", 1), []string{"p.yaml:10: acceptable_recovery_lag: must be between 0 and 1099511627776 records, got 1099511627777"}},
		{"recovery lag not a number", strings.Replace(goodPipeline, "delivery: exactly_once", "acceptable_recovery_lag: lots", 1), []string{`p.yaml:10: acceptable_recovery_lag: want a whole number, got "lots"`}},
		{"standby replicas not a number", strings.Replace(goodPipeline, "delivery: exactly_once", "standby_replicas: two", 1), []string{`p.yaml:10: standby_replicas: want a whole number, got "two"`}},
		{"standby replicas misspelt", strings.Replace(goodPipeline, "delivery: exactly_once", "standby_replica: 1", 1), []string{`p.yaml:10: standby_replica: unknown field; did you mean "standby_replicas"?`}},
		{"sampling without rate", goodPipeline + "  overload: sample\n", []string{"p.yaml:11: limits.sample_rate: must be in (0, 1]"}},
		{"empty", "", []string{"the file is empty"}},
		{"watermark on a stateless step", strings.Replace(goodPipeline, "    kind: map\n", "    kind: map\n    watermark: {disorder: 1s}\n", 1),
			[]string{"p.yaml:7: steps[0].watermark: only a map, filter or flat_map step with state: true has a watermark"}},
		{"negative disorder", strings.Replace(goodPipeline, "    kind: map\n", "    kind: map\n    state: true\n    watermark: {disorder: -1s}\n", 1),
			[]string{"steps[0].watermark: disorder and idle_timeout must not be negative"}},
		{"timers per key over per task", goodPipeline + "  timers_per_key: 10\n  timers_per_task: 5\n",
			[]string{"limits.timers_per_key: must be at least 1 and at most timers_per_task (5), got 10"}},
		{"limits on a step without a function", strings.Replace(goodPipeline, "  - name: upper\n", "  - {name: k, kind: key_by, field: a, limits: {call_timeout: 1s}}\n  - name: upper\n", 1),
			[]string{"steps[0].limits: step k runs no function"}},
		{"step call timeout out of range", strings.Replace(goodPipeline, "    kind: map\n", "    kind: map\n    limits: {call_timeout: 11m}\n", 1),
			[]string{"steps[0].limits.call_timeout: must be between 1ms and 10m0s, got 11m0s"}},
		{"step memory limit out of range", strings.Replace(goodPipeline, "    kind: map\n", "    kind: map\n    limits: {memory_limit: 4GiB}\n", 1),
			[]string{"steps[0].limits.memory_limit: must be between"}},
		{"timer changelog taken", strings.Replace(goodPipeline, "    function: ../testdata/go/upper.wasm\n",
			"    function: ../testdata/go/upper.wasm\n    state: true\n  - {name: upper-timers, kind: map, function: ../testdata/go/upper.wasm}\n", 1),
			[]string{"steps[0].name: step upper has timers, whose changelog would be that of step upper-timers"}},
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

// TestParsePipelineReportsEveryProblem gives files with several problems
// of every sort at once: unknown fields (with the closest known one),
// values of the wrong kind, values out of their set (with the closest
// valid one) and what validation finds in the rest of the file. Each is
// reported, with its line and field, in plain words: no Go type names.
func TestParsePipelineReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // lines of the error, in order
	}{
		{"typo, bad kind, bad duration", `name: orders
source: {topics: [orders]}
steps:
  - name: upper
    kind: mapp
    fucntion: upper.wasm
sink: {topic: out}
commit_interval: soon
`, []string{
			`p.yaml:4: steps[0].function: is required: the path of a .wasm file`,
			`p.yaml:5: steps[0].kind: must be map, filter, flat_map, branch, key_by, join or aggregate, got "mapp"; did you mean "map"?`,
			`p.yaml:6: steps[0].fucntion: unknown field; did you mean "function"?`,
			`p.yaml:8: commit_interval: want a duration such as 100ms, 1s or 2m, got "soon"`,
		}},
		{"values of the wrong kind", `name: orders
source:
  topics: orders
steps:
  - {name: count, kind: aggregate, function: c.wasm, state: yes please, window: {type: tumbeling, size: 10, grace: 1s}}
sink: {topic: [out]}
delivery: exactly-once
batch_size: lots
limits: {memory_limit: [64MiB], overload: dorp}
`, []string{
			`p.yaml:3: source.topics: want a list, got "orders"`,
			`p.yaml:5: steps[0].state: want true or false, got "yes please"`,
			`p.yaml:5: steps[0].window.size: want a duration such as 100ms, 1s or 2m, got 10`,
			`p.yaml:5: steps[0].window.type: must be tumbling, hopping, sliding, session or global, got "tumbeling"; did you mean "tumbling"?`,
			`p.yaml:6: sink.topic: want a string, got a list`,
			`p.yaml:7: delivery: must be at_most_once, at_least_once or exactly_once, got "exactly-once"; did you mean "exactly_once"?`,
			`p.yaml:8: batch_size: want a whole number, got "lots"`,
			`p.yaml:9: limits.memory_limit: want a size such as 64MiB, 512KiB or 1GB, got a list`,
			`p.yaml:9: limits.overload: must be block, drop or sample, got "dorp"; did you mean "drop"?`,
		}},
		{"unknown fields everywhere", `name: orders
nmae: again
source: {topics: [orders], strat: latest}
tables: [{name: users, topic: users, globl: true}]
steps:
  - name: enrich
    kind: join
    table: users
    typ: left
  - name: tag
    kind: map
    function: tag.wasm
    config: {token: {evn: TOKEN}, level: 3}
    limits: {call_timout: 2s}
    outputs: [{name: odd, to: odd, partitions: 3}]
  - name: route
    kind: branch
    branches: [{name: big, function: big.wasm, topic: big}, {name: rest, to: rest}]
sink: {tpoic: out}
dead_letter: {topic: dlq, zzz: 1}
`, []string{
			`p.yaml:2: nmae: unknown field; did you mean "name"?`,
			`p.yaml:3: source.strat: unknown field; did you mean "start"?`,
			`p.yaml:4: tables[0].globl: unknown field; did you mean "global"?`,
			`p.yaml:9: steps[0].typ: unknown field; did you mean "type"?`,
			`p.yaml:13: steps[1].config.token.evn: unknown field; did you mean "env"?`,
			`p.yaml:14: steps[1].limits.call_timout: unknown field; did you mean "call_timeout"?`,
			`p.yaml:15: steps[1].outputs[0].partitions: unknown field`,
			`p.yaml:18: steps[2].branches[0].topic: unknown field`,
			`p.yaml:18: steps[2].branches[0]: branch route.big goes nowhere: no later step reads it (from:) and it has no to: topic`,
			`p.yaml:19: sink.tpoic: unknown field; did you mean "topic"?`,
			`p.yaml:20: dead_letter.zzz: unknown field`,
		}},
		{"a key twice, a join type, a config entry", `name: orders
source: {topics: [orders]}
steps:
  - {name: j, kind: join, stream: clicks, type: lefft, window: {before: 1s, after: 1s}}
  - {name: m, kind: map, function: m.wasm, config: {a: [1], b: {}}}
sink: {topic: out}
sink: {topic: out2}
`, []string{
			`p.yaml:4: steps[0].type: must be inner, left or outer, got "lefft"; did you mean "left"?`,
			`p.yaml:5: steps[1].config.a: want a value, {env: NAME} or {file: PATH}, got a list`,
			`p.yaml:5: steps[1].config.b: a config entry is a value, {env: NAME} or {file: PATH}, not {}`,
			`p.yaml:7: sink: given twice (first on line 6)`,
		}},
		{"not a mapping", "- name: orders\n", []string{`p.yaml:1: want a mapping of fields (name: value), got a list`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePipeline("p.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("errors\n%s\nwant\n%s", got, want)
			}
			for _, goType := range []string{"pipeline.", "time.Duration", "!!", "int64", "[]string"} {
				if strings.Contains(err.Error(), goType) {
					t.Errorf("the errors name a Go type or a YAML tag (%q)", goType)
				}
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		got  string
		want string
	}{
		{"fucntion", `; did you mean "function"?`},
		{"Function", `; did you mean "function"?`},
		{"functoin", `; did you mean "function"?`},
		{"func", ""},
		{"kidn", `; did you mean "kind"?`},
		{"x", ""},
		{"", ""},
	} {
		if got := suggest(tc.got, "name", "kind", "function", "field"); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.got, got, tc.want)
		}
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
		{Inputs: []string{"bids", "more-bids"}, From: 0, To: 3, Output: "bids-by-bidder-repartition", Out: 2},
		{Inputs: []string{"bids-by-bidder-repartition"}, From: 3, To: 4, Output: "out", Last: true, Out: 3},
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

// twoAggregates is a pipeline whose window results are re-keyed and
// aggregated again.
const twoAggregates = `name: hot
source: {topics: [bids]}
steps:
  - {name: by-item, kind: key_by, field: item}
  - {name: count, kind: aggregate, function: count.wasm, window: {type: tumbling, size: 10s}}
  - {name: tag, kind: map, function: tag.wasm}
  - {name: by-window, kind: key_by, field: start}
  - {name: top, kind: aggregate, function: top.wasm, window: {type: tumbling, size: 10s}}
sink: {topic: out}
delivery: exactly_once
`

func TestStepsAfterAnAggregate(t *testing.T) {
	p, err := ParsePipeline("p.yaml", []byte(twoAggregates))
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{
		{Inputs: []string{"bids"}, From: 0, To: 1, Output: "hot-by-item-repartition", Out: 0},
		{Inputs: []string{"hot-by-item-repartition"}, From: 1, To: 4, Output: "hot-by-window-repartition", Out: 3},
		{Inputs: []string{"hot-by-window-repartition"}, From: 4, To: 5, Output: "out", Last: true, Out: 4},
	}
	if got := p.Stages(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stages\n got %+v\nwant %+v", got, want)
	}
	// Under emit: update the first aggregate's results are changes that
	// the second folds (Retractions).
	updating := strings.Replace(twoAggregates, "window: {type: tumbling, size: 10s}}\n  - {name: tag",
		"window: {type: tumbling, size: 10s}, emit: update}\n  - {name: tag", 1)
	up, err := ParsePipeline("p.yaml", []byte(updating))
	if err != nil {
		t.Fatalf("an aggregate after one with emit: update: %v", err)
	}
	emits, folds := up.Retractions()
	if fmt.Sprint(emits, folds) != "[false true false false false] [false false false false true]" {
		t.Fatalf("Retractions: emits %v, folds %v", emits, folds)
	}
	if emits, folds = p.Retractions(); slices.Contains(emits, true) || slices.Contains(folds, true) {
		t.Fatalf("Retractions under emit: final: emits %v, folds %v", emits, folds)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"stateful without key_by", "  - {name: by-window, kind: key_by, field: start}\n", "",
			"steps[3].kind: step top keeps state and reads the window results of aggregate step count: put a key_by step between them"},
		{"state: true without key_by", "kind: map, function: tag.wasm}", "kind: map, function: tag.wasm, state: true}",
			"steps[2].kind: step tag keeps state and reads the window results of aggregate step count"},
		{"session windows after emit update", "top.wasm, window: {type: tumbling, size: 10s}}", "top.wasm, window: {type: session, gap: 10s}}",
			"steps[4].window.type: aggregate step top reads the updates of aggregate step count (emit: update), which it folds as a set of current results: its windows must be tumbling or hopping, not session"},
		{"two key_by after emit update", "  - {name: by-window, kind: key_by, field: start}\n",
			"  - {name: by-name, kind: key_by, field: item}\n  - {name: by-window, kind: key_by, field: start}\n",
			"steps[4].kind: key_by step by-window is the second between aggregate step count, which has emit: update"},
		{"state after emit update", "  - {name: by-window, kind: key_by, field: start}\n",
			"  - {name: by-window, kind: key_by, field: start}\n  - {name: dedup, kind: map, function: dedup.wasm, state: true}\n",
			"steps[4].kind: step dedup keeps state and reads the updates of aggregate step count (emit: update): only an aggregate step can read them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(updating, tc.old, tc.new, 1)
			if tc.name == "stateful without key_by" || tc.name == "state: true without key_by" {
				src = strings.Replace(twoAggregates, tc.old, tc.new, 1)
			}
			if src == twoAggregates {
				t.Fatalf("%q not in the pipeline", tc.old)
			}
			_, err := ParsePipeline("p.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A map and a filter after an aggregate stay in its stage.
	p, err = ParsePipeline("p.yaml", []byte(strings.Replace(twoAggregates,
		"  - {name: by-window, kind: key_by, field: start}\n  - {name: top, kind: aggregate, function: top.wasm, window: {type: tumbling, size: 10s}}\n",
		"  - {name: big, kind: filter, function: big.wasm}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stages(); len(st) != 2 || st[1].From != 1 || st[1].To != 4 || !st[1].Last {
		t.Fatalf("stages of aggregate, map, filter: %+v", st)
	}
}

func TestTapErrors(t *testing.T) {
	for _, tc := range []struct{ name, to, want string }{
		{"bad name", "no spaces", `steps[1].to: "no spaces" is not a valid topic name`},
		{"a source", "bids", `steps[1].to: "bids" is a topic the pipeline reads`},
		{"the dead-letter topic", "hot-dlq", `steps[1].to: "hot-dlq" is the pipeline's dead-letter, late, changelog or repartition topic`},
		{"a repartition topic", "hot-by-window-repartition", `is the pipeline's dead-letter, late, changelog or repartition topic`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(twoAggregates, "window: {type: tumbling, size: 10s}}\n  - {name: tag",
				fmt.Sprintf("window: {type: tumbling, size: 10s}, to: %q}\n  - {name: tag", tc.to), 1)
			src = strings.Replace(src, "delivery: exactly_once", "delivery: exactly_once\ndead_letter: {topic: hot-dlq}", 1)
			_, err := ParsePipeline("p.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	last := strings.Replace(twoAggregates, "window: {type: tumbling, size: 10s}}\nsink", "window: {type: tumbling, size: 10s}, to: out}\nsink", 1)
	if _, err := ParsePipeline("p.yaml", []byte(last)); err == nil || !strings.Contains(err.Error(), `steps[4].to: "out" is the sink`) {
		t.Fatalf("to: the sink on the last step: %v", err)
	}
	ok := strings.Replace(twoAggregates, "window: {type: tumbling, size: 10s}}\n  - {name: tag", "window: {type: tumbling, size: 10s}, to: counts}\n  - {name: tag", 1)
	if p, err := ParsePipeline("p.yaml", []byte(ok)); err != nil || p.Steps[1].To != "counts" {
		t.Fatalf("a tap: %v", err)
	}
}

// fanOut reads the source twice and merges.
const fanOut = `name: fan
source: {topics: [events]}
steps:
  - {name: clicks, kind: filter, function: f.wasm, from: [source], to: clicks}
  - {name: views, kind: filter, function: f.wasm, from: [source]}
  - {name: both, kind: map, function: m.wasm, from: [clicks, views]}
sink: {topic: out}
`

func TestFromErrors(t *testing.T) {
	p, err := ParsePipeline("p.yaml", []byte(fanOut))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.StepInputs()); got != "[[-1] [-1] [0 1]]" {
		t.Fatalf("step inputs %s", got)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown", "from: [clicks, views]", "from: [clicks, nope]", `steps[2].from: "nope" is not a step of the pipeline`},
		{"itself", "from: [clicks, views]", "from: [both]", `steps[2].from: "both" is not before step both`},
		{"later", "function: f.wasm, from: [source]}", "function: f.wasm, from: [both]}", `steps[1].from: "both" is not before step views`},
		{"twice", "from: [clicks, views]", "from: [views, views]", `steps[2].from: "views" is named twice`},
		{"goes nowhere", "from: [clicks, views]", "from: [views]", "steps[0]: the output of step clicks goes nowhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(fanOut, tc.old, tc.new, 1)
			if src == fanOut {
				t.Fatalf("%q not in the pipeline", tc.old)
			}
			// "goes nowhere" needs clicks without its tap.
			if tc.name == "goes nowhere" {
				src = strings.Replace(src, ", to: clicks}", "}", 1)
			}
			_, err := ParsePipeline("p.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// Across a repartition: the aggregate's stage begins after by-window.
	src := strings.Replace(twoAggregates, "  - {name: top, kind: aggregate, function: top.wasm,", "  - {name: top, kind: aggregate, function: top.wasm, from: [tag],", 1)
	if _, err := ParsePipeline("p.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), `steps[4].from: "tag" is before the repartition in front of step top`) {
		t.Fatalf("from: across a repartition: %v", err)
	}
	src = strings.Replace(twoAggregates, "  - {name: top, kind: aggregate, function: top.wasm,", "  - {name: top, kind: aggregate, function: top.wasm, from: [source],", 1)
	if _, err := ParsePipeline("p.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), `steps[4].from: "source": step top reads what a repartition topic brings`) {
		t.Fatalf("from: source after a repartition: %v", err)
	}
}

// TestFormats: source.format may be msgpack, besides json, bytes and the
// registry formats; the sink's defaults to the steps' value format, which is
// the one key_by fields and an aggregate's time_field are read in.
func TestFormats(t *testing.T) {
	withFormats := func(source, sink string) string {
		y := goodPipeline
		if source != "" {
			y = strings.Replace(y, "  topics: [orders]\n", "  topics: [orders]\n  format: "+source+"\n", 1)
		}
		if sink != "" {
			y = strings.Replace(y, "  topic: orders-out\n", "  topic: orders-out\n  format: "+sink+"\n", 1)
		}
		return y
	}
	for _, tc := range []struct{ source, sink, wantSource, wantSink string }{
		{"", "", "json", "json"},
		{"msgpack", "", "msgpack", "msgpack"},
		{"msgpack", "msgpack", "msgpack", "msgpack"},
		{"bytes", "", "bytes", "bytes"},
		{"avro\n  registry: http://r:8081", "", "avro", "json"},
		{"protobuf\n  registry: http://r:8081\n  as: msgpack", "", "protobuf", "msgpack"},
		{"json_schema\n  registry: http://r:8081", "avro", "json_schema", "avro"},
		{"", "protobuf\n  registry: https://r\n  message: a.B", "json", "protobuf"},
	} {
		p, err := ParsePipeline("p.yaml", []byte(withFormats(tc.source, tc.sink)))
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.source, tc.sink, err)
		}
		steps := tc.wantSource
		if IsRegistryFormat(steps) {
			steps = p.Source.As
		}
		if p.Source.Format != tc.wantSource || p.Sink.Format != tc.wantSink || p.Source.ValueFormat() != steps {
			t.Errorf("%s/%s: source %s, sink %s, steps %s", tc.source, tc.sink, p.Source.Format, p.Sink.Format, p.Source.ValueFormat())
		}
	}
	for _, tc := range []struct{ source, sink, want string }{
		{"cbor", "", `p.yaml:4: source.format: must be one of json, msgpack, bytes, avro, protobuf, json_schema, got "cbor"`},
		{"msgpack", "json", `p.yaml:11: sink.format: must be the steps' value format msgpack or one of avro, protobuf, json_schema, got "json"`},
		{"avro", "", `source.registry: want the schema registry's http:// or https:// URL, got ""`},
		{"avro\n  registry: localhost:8081", "", `source.registry: want the schema registry's http:// or https:// URL, got "localhost:8081"`},
		{"avro\n  registry: http://r\n  as: cbor", "", `source.as: must be json or msgpack, got "cbor"`},
		{"json\n  registry: http://r", "", "source.registry: registry and as are for the formats avro, protobuf, json_schema"},
		{"", "avro", `sink.registry: want the schema registry's http:// or https:// URL, got ""`},
		{"", "avro\n  registry: http://r\n  message: a.B", "sink.message: a message type is for the protobuf format"},
		{"", "json\n  subject: s", "sink.registry: registry, subject, schema and message are for the formats avro, protobuf, json_schema"},
	} {
		_, err := ParsePipeline("p.yaml", []byte(withFormats(tc.source, tc.sink)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s/%s: error %v does not say %q", tc.source, tc.sink, err, tc.want)
		}
	}
	agg := Step{Kind: StepAggregate, Window: &WindowSpec{Type: "tumbling", Size: time.Second}, TimeField: "p.ts"}
	for format, want := range map[string]string{FormatJSON: "*windowing.JSONField", FormatMsgpack: "*msgfield.TimeField", FormatBytes: "*windowing.JSONField"} {
		cfg, err := agg.Windowing(format)
		if got := fmt.Sprintf("%T", cfg.Time); err != nil || got != want {
			t.Errorf("%s: time_field read by %s, %v; want %s", format, got, err, want)
		}
	}
}

// TestReferencePipeline parses docs/pipeline.md's file of every field: it
// loads, its group settings are the defaults it says they are, and every
// top-level field of a pipeline file is documented there, in that file or
// in the table of limits.
func TestReferencePipeline(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "pipeline.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	_, rest, ok := strings.Cut(text, "```yaml\n")
	file, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/pipeline.md has no yaml block")
	}
	p, err := ParsePipeline("docs/pipeline.md", []byte(file))
	if err != nil {
		t.Fatalf("the reference file does not load: %v", err)
	}
	if p.StandbyReplicas != 0 || p.WarmupReplicas() != DefaultMaxWarmupReplicas || p.RecoveryLag() != DefaultAcceptableRecoveryLag {
		t.Errorf("standby_replicas %d, max_warmup_replicas %d, acceptable_recovery_lag %d: not the defaults",
			p.StandbyReplicas, p.WarmupReplicas(), p.RecoveryLag())
	}
	fields := reflect.TypeFor[Pipeline]()
	for i := range fields.NumField() {
		tag, _, _ := strings.Cut(fields.Field(i).Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		if !strings.Contains(file, "\n"+tag+":") && !strings.Contains(text, "`"+tag+"`") && !strings.Contains(text, "`"+tag+".") {
			t.Errorf("docs/pipeline.md does not document %s", tag)
		}
	}
}
