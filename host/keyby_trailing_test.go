package host_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// TestKeyByRefusesTrailingBytes sends records through key_by on a JSON
// field in process: one whose value has bytes after its JSON document
// (issue 14: `{...}}xyz` went through key_by and failed later, with the
// repartition topic's offsets) goes to the dead-letter topic from the
// key_by step, with the input's topic, partition and offset; the others
// are counted by their new key.
func TestKeyByRefusesTrailingBytes(t *testing.T) {
	counter, _ := filepath.Abs("../testdata/go/counter.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: trailing
source: {topics: [in]}
steps:
  - {name: by-k, kind: key_by, field: k}
  - {name: count, kind: map, function: %s, state: true}
sink: {topic: out}
dead_letter: {topic: dlq}
delivery: exactly_once
`, counter))
	ctx := context.Background()
	ip := startInProcess(t, p, 1)
	got := map[string][]abi.Record{}
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		hs := make([]abi.Header, len(r.Headers))
		for i, h := range r.Headers {
			hs[i] = abi.Header{Key: h.Key, Value: append([]byte(nil), h.Value...)}
		}
		r.Headers = hs
		got[topic] = append(got[topic], r)
	}
	recs := []abi.Record{
		{Value: []byte(`{"k":"a"}`)},
		{Value: []byte(` {"k":"a"} `)},
		{Value: []byte(`{"k":"a"}}xyz`)},
		{Value: []byte(`{"k":"a"}{"k":"b"}`)},
		{Value: []byte(`{"k":"a"}`)},
	}
	if err := ip.Send(ctx, "in", recs); err != nil {
		t.Fatal(err)
	}
	if err := ip.Commit(); err != nil {
		t.Fatal(err)
	}
	var counts []string
	for _, r := range got["out"] {
		counts = append(counts, string(r.Key)+"="+string(r.Value))
	}
	if fmt.Sprint(counts) != "[a=1 a=2 a=3]" {
		t.Errorf("outputs %v, want [a=1 a=2 a=3]", counts)
	}
	dlq := got["dlq"]
	if len(dlq) != 2 {
		t.Fatalf("%d dead letters, want 2: %v", len(dlq), dlq)
	}
	for i, want := range []string{"2", "3"} {
		r := dlq[i]
		if header(r, "eddy.step") != "by-k" || header(r, "eddy.error.code") != "bad_input" ||
			header(r, "eddy.source.topic") != "in" || header(r, "eddy.source.partition") != "0" || header(r, "eddy.source.offset") != want {
			t.Errorf("dead letter %d (%s): headers %v, want step by-k, bad_input, in/0/%s", i, r.Value, r.Headers, want)
		}
	}
}
