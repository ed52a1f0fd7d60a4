package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/schemas"
)

// Two versions of the bids' Avro schema: the second moves nothing and adds
// a field with a default (backward compatible), as a producer upgrading
// its schema does while old records stay in the topic.
const (
	bidAvroV1 = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
	{"name":"auction","type":"long"},
	{"name":"price","type":"long"},
	{"name":"bidder","type":{"type":"record","name":"Bidder","fields":[
		{"name":"id","type":"long"},
		{"name":"city","type":"string"}]}},
	{"name":"date_time","type":{"type":"long","logicalType":"timestamp-millis"}}]}`
	bidAvroV2 = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
	{"name":"auction","type":"long"},
	{"name":"price","type":"long"},
	{"name":"bidder","type":{"type":"record","name":"Bidder","fields":[
		{"name":"id","type":"long"},
		{"name":"city","type":"string"}]}},
	{"name":"date_time","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"channel","type":["null","string"],"default":null}]}`
	countProto = `syntax = "proto3";
package eddy.test;
message CityCount { int64 count = 1; }
`
)

// formatsPipeline is Avro bids → key_by the bidder's city (a nested
// field) → a 1 s tumbling count (time from date_time) → Protobuf counts.
const formatsPipeline = `name: %s
source: {topics: [bids], format: avro, registry: %s}
steps:
  - {name: by-city, kind: key_by, field: bidder.city}
  - name: count
    kind: aggregate
    function: %s
    time_field: date_time
    time: event
    window: {type: tumbling, size: 1s}
sink: {topic: counts, format: protobuf, schema: count.proto}
dead_letter: {topic: dlq}
delivery: exactly_once
commit_interval: 50ms
batch_size: 64
`

func formatsTestPipeline(t *testing.T, name, registryURL string) *host.Pipeline {
	t.Helper()
	dir := t.TempDir()
	count, _ := filepath.Abs("../testdata/go/nx-count.wasm")
	if err := os.WriteFile(filepath.Join(dir, "count.proto"), []byte(countProto), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(formatsPipeline, name, registryURL, count)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := host.LoadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRegistryFormats runs Avro input written with two schema versions
// through key_by on a nested field and a tumbling count to Protobuf
// output, on the embedded registry, exactly once: every window's count,
// read back through the registry, equals a reference; malformed records
// and records of another schema are in the dead-letter topic with their
// reasons.
func TestRegistryFormats(t *testing.T) {
	ctx := context.Background()
	b := startBroker(t, "bids", "counts", "dlq")
	brokers := []string{b.Addr()}
	er, err := embedded.StartRegistry("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { er.Close() })
	reg, err := schemas.NewRegistry(er.URL(), schemas.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := reg.Register(ctx, "bids-value", schemas.Avro, bidAvroV1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := reg.Register(ctx, "bids-value", schemas.Avro, bidAvroV2)
	if err != nil {
		t.Fatal(err)
	}
	other, err := reg.Register(ctx, "other-value", schemas.JSONSchema, `{"type":"object"}`)
	if err != nil {
		t.Fatal(err)
	}
	enc1, _ := schemas.NewEncoder(v1, schemas.JSON, "")
	enc2, _ := schemas.NewEncoder(v2, schemas.JSON, "")

	const base = int64(1700000000000)
	cities := []string{"Oslo", "Lyon", "Kyoto", "Porto", "Quito"}
	type win struct {
		city  string
		start int64
	}
	want := map[win]int64{}
	rng := rand.New(rand.NewPCG(19, 19))
	var recs []abi.Record
	for i := range 3000 {
		city := cities[rng.IntN(len(cities))]
		ts := base + int64(i)*3 // in order: nothing is late
		enc, extra := enc1, ""
		if i%2 == 1 {
			enc, extra = enc2, `,"channel":"app"`
		}
		v, err := enc.Encode(nil, []byte(fmt.Sprintf(`{"auction":%d,"price":%d,"bidder":{"id":%d,"city":%q},"date_time":%d%s}`,
			i%17, rng.IntN(1000), i%101, city, ts, extra)))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i)), Value: v, Timestamp: ts})
		want[win{city, ts / 1000 * 1000}]++
	}
	// Records that cannot be read, among the others.
	bad := map[string]string{ // key → the dead-letter code expected
		"plain-json":   "undecodable",
		"unknown-id":   "unknown_schema",
		"other-schema": "undecodable",
		"truncated":    "undecodable",
	}
	good := recs[10].Value
	recs = append(recs[:1500:1500],
		append([]abi.Record{
			{Key: []byte("plain-json"), Value: []byte(`{"auction":1}`), Timestamp: base + 4500},
			{Key: []byte("unknown-id"), Value: []byte{0, 0, 0, 0x30, 0x39, 2, 4}, Timestamp: base + 4500},
			{Key: []byte("other-schema"), Value: append([]byte{0, 0, 0, 0, byte(other.ID)}, `{}`...), Timestamp: base + 4500},
			{Key: []byte("truncated"), Value: good[:len(good)-4], Timestamp: base + 4500},
		}, recs[1500:]...)...)
	// Far ahead on every partition: closes every window above.
	for j := range 16 {
		v, _ := enc1.Encode(nil, []byte(fmt.Sprintf(`{"auction":0,"price":0,"bidder":{"id":0,"city":"end"},"date_time":%d}`, base+3_600_000)))
		recs = append(recs, abi.Record{Key: []byte("close" + strconv.Itoa(j)), Value: v, Timestamp: base + 3_600_000})
	}
	produceAll(t, brokers, "bids", recs)

	p := formatsTestPipeline(t, "formats", er.URL())
	node := startStatefulNode(t, brokers, p, "one", t.TempDir())
	out := consumeAll(t, b, "counts", len(want), 2*time.Second)
	if st := node.node.Status().SchemaRegistry; st == nil || !st.Up || st.URL != er.URL() {
		t.Errorf("status schema_registry %+v", st)
	}
	node.stop(t)

	// A consumer that knows nothing but the registry reads every output.
	dec := schemas.NewDecoder(reg, schemas.Protobuf, schemas.JSON)
	got := map[win]int64{}
	for _, r := range out {
		plain, err := dec.Decode(ctx, nil, r.Value)
		if err != nil {
			t.Fatalf("output %q: %v", r.Value, err)
		}
		var c struct {
			Count int64 `json:"count"`
		}
		if err := json.Unmarshal(plain, &c); err != nil {
			t.Fatalf("output %s: %v", plain, err)
		}
		start, _ := strconv.ParseInt(header(r, "eddy.window.start"), 10, 64)
		w := win{string(r.Key), start}
		if _, dup := got[w]; dup {
			t.Fatalf("window %v written twice", w)
		}
		got[w] = c.Count
	}
	var diffs []string
	for w, n := range want {
		if got[w] != n {
			diffs = append(diffs, fmt.Sprintf("%v: got %d want %d", w, got[w], n))
		}
	}
	for w := range got {
		if _, ok := want[w]; !ok {
			diffs = append(diffs, fmt.Sprintf("%v: unexpected %d", w, got[w]))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%d of %d windows differ, e.g. %v", len(diffs), len(want), diffs[:min(5, len(diffs))])
	}

	dlq := consumeAll(t, b, "dlq", len(bad), time.Second)
	if len(dlq) != len(bad) {
		t.Fatalf("%d dead letters, want %d", len(dlq), len(bad))
	}
	for _, r := range dlq {
		code, ok := bad[string(r.Key)]
		if !ok || header(r, "eddy.error.code") != code || header(r, "eddy.step") != "source" ||
			!strings.Contains(header(r, "eddy.error"), "avro") || header(r, "eddy.source.topic") != "bids" {
			t.Errorf("dead letter %s: code %q step %q error %q", r.Key, header(r, "eddy.error.code"), header(r, "eddy.step"), header(r, "eddy.error"))
		}
	}
}

// A node does not start when its registry cannot be reached or its sink's
// schema cannot be used; each error says which.
func TestRegistryAtStart(t *testing.T) {
	b := startBroker(t, "bids", "counts", "dlq")
	eng, err := runtime.NewEngine(runtime.WithCacheDir(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	newNode := func(p *host.Pipeline) error {
		_, err := host.NewNode(context.Background(), p, host.NodeConfig{Brokers: []string{b.Addr()}, NodeID: "x", Engine: eng, Logger: testLogger(t)})
		return err
	}
	// Nothing listens on the registry's address.
	err = newNode(formatsTestPipeline(t, "down", "http://127.0.0.1:1"))
	if err == nil || !strings.Contains(err.Error(), "schema registry unavailable") || !strings.Contains(err.Error(), "source") {
		t.Errorf("registry down: %v", err)
	}
	// The registry refuses the sink's schema (a real registry checks it
	// against the subject's compatibility rule; the embedded one, srfake,
	// accepts every schema, so the refusal is staged here).
	fake := srfake.New()
	defer fake.Close()
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/subjects/counts-value/versions" {
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error_code":409,"message":"Schema being registered is incompatible with an earlier schema for subject \"counts-value\""}`))
			return true
		}
		return false
	})
	err = newNode(formatsTestPipeline(t, "incompatible", fake.URL()))
	if err == nil || !strings.Contains(err.Error(), "sink: schema count.proto") || !strings.Contains(err.Error(), "incompatible") {
		t.Errorf("an incompatible sink schema: %v", err)
	}
	// The sink's subject has no schema and the pipeline gives none.
	p := formatsTestPipeline(t, "nosubject", fake.URL())
	p.Sink.Schema = ""
	err = newNode(p)
	if err == nil || !strings.Contains(err.Error(), `subject "counts-value" has no schema`) {
		t.Errorf("a sink subject without a schema: %v", err)
	}
}

// TestRegistryDownWhileRunning takes the registry away while a node needs
// a schema it has not read yet: the node waits, says so in status and
// metrics, and goes on once the registry is back, losing nothing.
func TestRegistryDownWhileRunning(t *testing.T) {
	ctx := context.Background()
	b := startBroker(t, "bids", "counts", "dlq")
	brokers := []string{b.Addr()}
	fake := srfake.New()
	defer fake.Close()
	var down atomic.Bool
	fake.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if down.Load() {
			http.Error(w, `{"error_code":50003,"message":"down for the test"}`, http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	reg, _ := schemas.NewRegistry(fake.URL(), schemas.Options{})
	v1, err := reg.Register(ctx, "bids-value", schemas.Avro, bidAvroV1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := reg.Register(ctx, "bids-value", schemas.Avro, bidAvroV2)
	if err != nil {
		t.Fatal(err)
	}
	enc1, _ := schemas.NewEncoder(v1, schemas.JSON, "")
	enc2, _ := schemas.NewEncoder(v2, schemas.JSON, "")
	const base = int64(1700000000000)
	bids := func(enc *schemas.Encoder, from, n int, ts int64) []abi.Record {
		var recs []abi.Record
		for i := from; i < from+n; i++ {
			v, err := enc.Encode(nil, []byte(fmt.Sprintf(`{"auction":1,"price":2,"bidder":{"id":3,"city":"c%d"},"date_time":%d}`, i%3, ts)))
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i)), Value: v, Timestamp: ts})
		}
		return recs
	}
	produceAll(t, brokers, "bids", bids(enc1, 0, 300, base))
	p := formatsTestPipeline(t, "down", fake.URL())
	node := startStatefulNode(t, brokers, p, "one", t.TempDir())
	// Wait until the node has read the first records (schema v1 known).
	deadline := time.Now().Add(60 * time.Second)
	for node.node.Stats().In < 300 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	down.Store(true)
	// Records of schema v2, which the node has not read yet.
	produceAll(t, brokers, "bids", bids(enc2, 300, 300, base+500))
	for {
		st := node.node.Status().SchemaRegistry
		if st != nil && !st.Up && strings.Contains(st.Error, "unavailable") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never said the registry was down: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rec := httptest.NewRecorder()
	node.node.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if m := grepLines(rec.Body.String(), "eddy_schema_registry_"); !strings.Contains(m, "eddy_schema_registry_up{") ||
		!strings.Contains(grepLines(m, "_up{"), "} 0") || strings.Contains(grepLines(m, "unavailable_total{"), "} 0") {
		t.Errorf("metrics while down:\n%s", m)
	}
	time.Sleep(registryOutage) // a few retries
	down.Store(false)
	// Close the windows: one far-ahead record per partition.
	produceAll(t, brokers, "bids", bids(enc1, 600, 16, base+3_600_000))
	out := consumeAll(t, b, "counts", 3, 2*time.Second) // the first window of cities c0, c1, c2
	// The outage outlasted the transaction timeout: the waiting tasks gave
	// their batches up and the node aborted its transaction (rather than
	// the broker aborting it and fencing the node), then did them again.
	if st := node.node.Stats(); st.Aborts == 0 {
		t.Errorf("no transaction aborted during a %s outage: %+v", registryOutage, st)
	}
	node.stop(t)
	dec := schemas.NewDecoder(reg, schemas.Protobuf, schemas.JSON)
	total := int64(0)
	for _, r := range out {
		plain, err := dec.Decode(ctx, nil, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Count int64 `json:"count"`
		}
		json.Unmarshal(plain, &c)
		if start, _ := strconv.ParseInt(header(r, "eddy.window.start"), 10, 64); start == base {
			total += c.Count
		}
	}
	if total != 600 {
		t.Fatalf("the first window counted %d bids, want 600 (%d outputs)", total, len(out))
	}
	if dlq := consumeAll(t, b, "dlq", 0, 500*time.Millisecond); len(dlq) != 0 {
		t.Fatalf("%d dead letters, want none: the registry's absence is not the records' fault", len(dlq))
	}
}

// TestSinkMisfits writes the outputs of a map step with an Avro schema in
// process: an output that fits is encoded with the subject's latest schema,
// one that does not is not written, and its input record is dead-lettered
// with the reason, at the sink.
func TestSinkMisfits(t *testing.T) {
	ctx := context.Background()
	fake := srfake.New()
	defer fake.Close()
	reg, _ := schemas.NewRegistry(fake.URL(), schemas.Options{})
	s, err := reg.Register(ctx, "out-value", schemas.Avro, `{"type":"record","name":"Shout","fields":[{"name":"NAME","type":"string"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	upper, _ := filepath.Abs("../testdata/go/upper.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: shout
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: %s}
sink: {topic: out, format: avro, registry: %s}
dead_letter: {topic: dlq}
`, upper, fake.URL()))
	if p.Sink.Subject != "out-value" || p.Sink.Registry != fake.URL() {
		t.Fatalf("sink defaults: %+v", p.Sink)
	}
	ip := startInProcess(t, p, 1)
	var outs, dlq []abi.Record
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		r.Headers = append([]abi.Header(nil), r.Headers...)
		if topic == "dlq" {
			dlq = append(dlq, r)
		} else {
			outs = append(outs, r)
		}
	}
	err = ip.Send(ctx, "in", []abi.Record{
		{Key: []byte("a"), Value: []byte(`{"name":"ada"}`)},
		{Key: []byte("b"), Value: []byte(`{"name":"bob","age":7}`)},
		{Key: []byte("c"), Value: []byte(`{"name":"cy"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	dec := schemas.NewDecoder(reg, schemas.Avro, schemas.JSON)
	var got []string
	for _, r := range outs {
		v, err := dec.Decode(ctx, nil, r.Value)
		if err != nil || int(r.Value[4]) != s.ID {
			t.Fatalf("output %q: %v", r.Value, err)
		}
		got = append(got, string(r.Key)+"="+string(v))
	}
	if strings.Join(got, " ") != `a={"NAME":"ADA"} c={"NAME":"CY"}` {
		t.Fatalf("outputs %v", got)
	}
	if len(dlq) != 1 || string(dlq[0].Key) != "b" || string(dlq[0].Value) != `{"name":"bob","age":7}` ||
		header(dlq[0], "eddy.step") != "sink" || header(dlq[0], "eddy.error.code") != "schema_misfit" ||
		!strings.Contains(header(dlq[0], "eddy.error"), `record Shout has no field "AGE"`) {
		t.Fatalf("dead letters %+v", dlq)
	}
}

// TestRegistryAsMsgpack decodes Avro into msgpack for the steps (source.as:
// msgpack): key_by on a nested field and time_field read the msgpack
// values, in process.
func TestRegistryAsMsgpack(t *testing.T) {
	ctx := context.Background()
	fake := srfake.New()
	defer fake.Close()
	reg, _ := schemas.NewRegistry(fake.URL(), schemas.Options{})
	v2, err := reg.Register(ctx, "bids-value", schemas.Avro, bidAvroV2)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := schemas.NewEncoder(v2, schemas.JSON, "")
	count, _ := filepath.Abs("../testdata/go/nx-count.wasm")
	p := loadPipeline(t, fmt.Sprintf(`name: asmp
source: {topics: [bids], format: avro, registry: %s, as: msgpack}
steps:
  - {name: by-city, kind: key_by, field: bidder.city}
  - {name: count, kind: aggregate, function: %s, time: event, time_field: date_time, window: {type: tumbling, size: 1s}}
sink: {topic: out}
dead_letter: {topic: dlq}
`, fake.URL(), count))
	if p.Sink.Format != "msgpack" {
		t.Fatalf("sink format %q, want the steps' msgpack", p.Sink.Format)
	}
	ip := startInProcess(t, p, 2)
	got := map[string]string{}
	ip.Out = func(topic string, r abi.Record, _ time.Time) {
		got[topic+" "+string(r.Key)+"@"+header(r, "eddy.window.start")] = string(r.Value)
	}
	const base = int64(1700000000000)
	var recs []abi.Record
	for i, c := range []string{"Oslo", "Lyon", "Oslo", "Oslo", "Lyon"} {
		v, err := enc.Encode(nil, []byte(fmt.Sprintf(`{"auction":1,"price":2,"bidder":{"id":3,"city":%q},"date_time":%d}`, c, base+int64(i)*100)))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, abi.Record{Key: []byte(strconv.Itoa(i)), Value: v})
	}
	if err := ip.Send(ctx, "bids", recs); err != nil {
		t.Fatal(err)
	}
	if err := ip.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	start := strconv.FormatInt(base, 10)
	if got["out Oslo@"+start] != `{"count":3}` || got["out Lyon@"+start] != `{"count":2}` || len(got) != 2 {
		t.Fatalf("outputs %v", got)
	}
}

// registryOutage is how long TestRegistryDownWhileRunning keeps the
// registry away: longer than the transaction timeout (10 s). A task waiting
// that long inside a transaction would have the broker abort it and fence
// the node (PRODUCER_FENCED, the node stops); it gives its batch up after
// half the timeout instead, and the node aborts and goes again.
var registryOutage = 12 * time.Second
