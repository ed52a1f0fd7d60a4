package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// msgpackPipeline writes a pipeline file whose source format is msgpack,
// with the sink given (its topic is events-out).
func msgpackPipeline(t *testing.T, sink string) string {
	t.Helper()
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	path := filepath.Join(t.TempDir(), "p.yaml")
	src := "name: mp\nsource: {topics: [events], format: msgpack}\nsteps:\n  - {name: up, kind: map, function: " + upper +
		"}\nsink: " + sink + "\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProduceConsumeMsgpack: eddy produce --format msgpack writes each
// line's JSON value as MessagePack (as msgpack/v5 reads it), and eddy
// consume --format msgpack (or --pipeline with a msgpack source) shows the
// values as JSON again; bytes that are not MessagePack show as value_b64
// and the command carries on.
func TestProduceConsumeMsgpack(t *testing.T) {
	b := testkafka.StartPartitions(t, 1, "events")
	in := `{"key":"a","value":{"user":{"id":7,"name":"ann"},"ts":1700000000000,"score":2.5,"tags":["x",null,true]},"timestamp":5}
{"key":"b","value":"hello"}
{"key":"c","value":null}
{"key":"d","value_b64":"eyJub3QiOiJtc2dwYWNrIn0="}
{"key":"e","value":-3}
`
	_, stderr, code := run(t, in, "produce", "--brokers", b.Addr(), "--topic", "events", "--format", "msgpack")
	if code != 0 || !strings.Contains(stderr, "produced 5 records to events") {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	// On the topic: MessagePack, as msgpack/v5 reads it.
	var recs []abi.Record
	_, err := host.Consume(context.Background(), []string{b.Addr()}, "events", host.ConsumeOptions{Max: 5, Idle: 10 * time.Second},
		func(r abi.Record, _ host.Meta) error {
			recs = append(recs, abi.Record{Key: r.Key, Value: append([]byte(nil), r.Value...)})
			return nil
		})
	if err != nil || len(recs) != 5 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	var first struct {
		User struct {
			ID   int    `msgpack:"id"`
			Name string `msgpack:"name"`
		} `msgpack:"user"`
		TS    int64   `msgpack:"ts"`
		Score float64 `msgpack:"score"`
		Tags  []any   `msgpack:"tags"`
	}
	if err := msgpack.Unmarshal(recs[0].Value, &first); err != nil || first.User.ID != 7 || first.User.Name != "ann" ||
		first.TS != 1700000000000 || first.Score != 2.5 || len(first.Tags) != 3 {
		t.Fatalf("%x reads as %+v, %v", recs[0].Value, first, err)
	}
	var s string
	if err := msgpack.Unmarshal(recs[1].Value, &s); err != nil || s != "hello" || recs[2].Value != nil || string(recs[3].Value) != `{"not":"msgpack"}` {
		t.Fatalf("values %x, %x, %x", recs[1].Value, recs[2].Value, recs[3].Value)
	}

	want := `{"key":"a","value":{"score":2.5,"tags":["x",null,true],"ts":1700000000000,"user":{"id":7,"name":"ann"}},"timestamp":5}
{"key":"b","value":"hello","timestamp":0}
{"key":"c","value":null,"timestamp":0}
{"key":"d","value_b64":"eyJub3QiOiJtc2dwYWNrIn0=","timestamp":0}
{"key":"e","value":-3,"timestamp":0}
`
	for _, args := range [][]string{{"--format", "msgpack"}, {"--pipeline", msgpackPipeline(t, "{topic: events-out}")}} {
		stdout, stderr, code := run(t, "", append([]string{"consume", "--brokers", b.Addr(), "--topic", "events", "--max", "5"}, args...)...)
		if code != 0 || stdout != want {
			t.Fatalf("consume %v: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", args, code, stdout, want, stderr)
		}
	}
	// Without: the bytes as they are (here, not UTF-8).
	stdout, _, _ := run(t, "", "consume", "--brokers", b.Addr(), "--topic", "events", "--max", "2")
	if !strings.Contains(stdout, `"value_b64":"`+base64.StdEncoding.EncodeToString(recs[0].Value)+`"`) {
		t.Fatalf("consume without --format:\n%s", stdout)
	}
}

// TestTestMsgpack: eddy test --format msgpack gives the function
// MessagePack values converted from the JSON lines and shows its outputs
// as JSON; --pipeline with a msgpack source does the same; a join input's
// sides are read from the MessagePack map.
func TestTestMsgpack(t *testing.T) {
	in := `{"key":"a","value":{"a":"x"}}
{"key":"b","value":"hello","timestamp":7}
{"key":"c","value":[1,2.5]}
`
	// upper upper-cases the ASCII letters of the bytes: the keys and
	// strings of the MessagePack.
	want := `{"key":"a","value":{"A":"X"},"timestamp":0}
{"key":"b","value":"HELLO","timestamp":7}
{"key":"c","value":[1,2.5],"timestamp":0}
`
	for _, args := range [][]string{{"--format", "msgpack"}, {"--pipeline", msgpackPipeline(t, "{topic: events-out}")}} {
		stdout, stderr, code := run(t, in, append([]string{"test", td("go/upper.wasm")}, args...)...)
		if code != 0 || stdout != want {
			t.Fatalf("test %v: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", args, code, stdout, want, stderr)
		}
	}
	// A join's sides: joiner wants JSON sides; the MessagePack integers
	// 49 and 50 are the bytes "1" and "2", JSON numbers. Its output is
	// JSON text, not MessagePack: shown as value_b64.
	stdout, stderr, code := run(t, `{"key":"k","value":{"left":49,"right":50}}`+"\n"+`{"key":"k","value":{"left":49,"right":null}}`+"\n",
		"test", "--format", "msgpack", "--kind", "join", td("go/joiner.wasm"))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	want = `{"key":"k","value_b64":"` + b64(`{"left":1,"right":2}`) + `","timestamp":0}` + "\n" +
		`{"key":"k","value_b64":"` + b64(`{"left":1,"right":null}`) + `","timestamp":0}` + "\n"
	if code != 0 || stdout != want {
		t.Fatalf("join: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", code, stdout, want, stderr)
	}
	if _, stderr, code := run(t, `{"value":[1]}`+"\n", "test", "--format", "msgpack", "--kind", "join", td("go/joiner.wasm")); code != 1 ||
		!strings.Contains(stderr, `line 1: join input: value must be {"left": ..., "right": ...}: the value is not a MessagePack map`) {
		t.Fatalf("join of an array: exit %d, stderr:\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "test", "--format", "avro", td("go/upper.wasm")); code != 1 || !strings.Contains(stderr, `--format: want json, msgpack or bytes, got "avro"`) {
		t.Fatalf("--format avro: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestFormatFlags: --format wins; else --pipeline's sink format for its
// sink topic, its source's for any other (and for eddy test), bytes for a
// schema registry's format; else json.
func TestFormatFlags(t *testing.T) {
	path := msgpackPipeline(t, "{topic: events-out}")
	avro := msgpackPipeline(t, "{topic: events-out, format: avro, registry: 'http://127.0.0.1:1'}")
	for _, tc := range []struct {
		f     formatFlags
		topic string
		want  string
	}{
		{formatFlags{}, "events", "json"},
		{formatFlags{pipeline: path}, "events", "msgpack"},
		{formatFlags{pipeline: path}, "", "msgpack"},
		{formatFlags{pipeline: path}, "events-out", "msgpack"},
		{formatFlags{pipeline: avro}, "events", "msgpack"},
		{formatFlags{pipeline: avro}, "events-out", "bytes"},
		{formatFlags{pipeline: path, format: "bytes"}, "events", "bytes"},
	} {
		got, err := tc.f.resolve(tc.topic)
		if err != nil || got != tc.want {
			t.Errorf("%+v for %q: %q, %v; want %q", tc.f, tc.topic, got, err, tc.want)
		}
	}
	if _, err := (&formatFlags{pipeline: filepath.Join(t.TempDir(), "none.yaml")}).resolve(""); err == nil || !strings.Contains(err.Error(), "--pipeline") {
		t.Errorf("a missing pipeline file: %v", err)
	}
}

// TestProduceConsumeRegistry writes JSON lines as Avro with a schema file
// registered on the way, reads them back decoded with the schema each
// value's id names, and refuses a line that does not fit the schema, naming
// it.
func TestProduceConsumeRegistry(t *testing.T) {
	b := testkafka.StartPartitions(t, 1, "bids", "other")
	reg, err := embedded.StartRegistry("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	schema := filepath.Join(t.TempDir(), "bid.avsc")
	os.WriteFile(schema, []byte(`{"type":"record","name":"Bid","fields":[{"name":"auction","type":"long"},
		{"name":"bidder","type":{"type":"record","name":"Bidder","fields":[{"name":"city","type":"string"}]}}]}`), 0o644)
	in := `{"key":"a","value":{"auction":7,"bidder":{"city":"Oslo"}},"timestamp":5}
{"key":"b","value":{"auction":8,"bidder":{"city":"Lyon"}},"timestamp":6}
`
	_, stderr, code := run(t, in, "produce", "--brokers", b.Addr(), "--topic", "bids", "--format", "avro", "--schema", schema, "--registry", reg.URL())
	if code != 0 || !strings.Contains(stderr, "produced 2 records to bids") {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	// A second producer, without --schema: the subject's latest.
	_, stderr, code = run(t, `{"key":"c","value":{"auction":9,"bidder":{"city":"Kyoto"}},"timestamp":7}`+"\n",
		"produce", "--brokers", b.Addr(), "--topic", "bids", "--format", "avro", "--registry", reg.URL())
	if code != 0 {
		t.Fatalf("produce with the latest schema: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := run(t, "", "consume", "--brokers", b.Addr(), "--topic", "bids", "--format", "avro", "--registry", reg.URL(), "--max", "3")
	want := `{"key":"a","value":{"auction":7,"bidder":{"city":"Oslo"}},"timestamp":5}
{"key":"b","value":{"auction":8,"bidder":{"city":"Lyon"}},"timestamp":6}
{"key":"c","value":{"auction":9,"bidder":{"city":"Kyoto"}},"timestamp":7}
`
	if code != 0 || stdout != want {
		t.Fatalf("consume: exit %d: %s\n%s", code, stdout, stderr)
	}
	// A line that does not fit: the producer stops and says which.
	_, stderr, code = run(t, `{"value":{"auction":1,"bidder":{"city":"x"}}}`+"\n"+`{"value":{"auction":"many"}}`+"\n",
		"produce", "--brokers", b.Addr(), "--topic", "other", "--format", "avro", "--subject", "bids-value", "--registry", reg.URL())
	if code == 0 || !strings.Contains(stderr, "record 2:") || !strings.Contains(stderr, "want an integer") {
		t.Fatalf("a misfit: exit %d: %s", code, stderr)
	}
	// Values that are not in the wire format are shown as they are, with
	// the reason.
	run(t, `{"key":"z","value":"plain"}`+"\n", "produce", "--brokers", b.Addr(), "--topic", "other")
	stdout, _, code = run(t, "", "consume", "--brokers", b.Addr(), "--topic", "other", "--format", "avro", "--registry", reg.URL(), "--idle", "1s")
	if code != 0 || !strings.Contains(stdout, `"value":"plain"`) || !strings.Contains(stdout, `"eddy.decode.error":`) {
		t.Fatalf("consume of a value not in the wire format: exit %d: %s", code, stdout)
	}
	// A registry that cannot be reached: a clear error, a non-zero exit.
	_, stderr, code = run(t, "", "consume", "--brokers", b.Addr(), "--topic", "bids", "--format", "avro", "--registry", "http://127.0.0.1:1", "--max", "1")
	if code == 0 || !strings.Contains(stderr, "schema registry unavailable") {
		t.Fatalf("registry down: exit %d: %s", code, stderr)
	}
}
