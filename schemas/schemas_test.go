package schemas_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/schemas"
)

const bidV1 = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
	{"name":"auction","type":"long"},
	{"name":"price","type":"long"},
	{"name":"bidder","type":{"type":"record","name":"Person","fields":[
		{"name":"id","type":"long"},
		{"name":"city","type":["null","string"],"default":null}]}},
	{"name":"channel","type":{"type":"enum","name":"Channel","symbols":["web","app"]}},
	{"name":"date_time","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"extra","type":"bytes"}]}`

// bidV2 adds a field with a default: backward compatible with bidV1.
const bidV2 = `{"type":"record","name":"Bid","namespace":"nexmark","fields":[
	{"name":"auction","type":"long"},
	{"name":"price","type":"long"},
	{"name":"bidder","type":{"type":"record","name":"Person","fields":[
		{"name":"id","type":"long"},
		{"name":"city","type":["null","string"],"default":null}]}},
	{"name":"channel","type":{"type":"enum","name":"Channel","symbols":["web","app"]}},
	{"name":"date_time","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"extra","type":"bytes"},
	{"name":"tags","type":{"type":"array","items":"string"},"default":[]}]}`

const countProto = `syntax = "proto3";
package eddy.test;
message Other { string x = 1; }
message Count {
  string city = 1;
  int64 count = 2;
  Window window = 3;
  message Window { int64 start = 1; int64 end = 2; }
  repeated string tags = 4;
  Kind kind = 5;
  bytes blob = 6;
  optional int32 maybe = 7;
}
enum Kind { KIND_UNSPECIFIED = 0; KIND_TUMBLING = 1; }
`

const priceSchema = `{"type":"object","properties":{"auction":{"type":"integer"},"price":{"type":"number","minimum":0}},"required":["auction","price"],"additionalProperties":false}`

func newRegistry(t testing.TB) (*srfake.Registry, *schemas.Registry) {
	t.Helper()
	fake := srfake.New()
	t.Cleanup(fake.Close)
	reg, err := schemas.NewRegistry(fake.URL(), schemas.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, reg
}

func register(t testing.TB, reg *schemas.Registry, subject string, f schemas.Format, text string) *schemas.Schema {
	t.Helper()
	s, err := reg.Register(context.Background(), subject, f, text)
	if err != nil {
		t.Fatalf("register %s: %v", subject, err)
	}
	return s
}

func encode(t testing.TB, s *schemas.Schema, from schemas.Plain, message string, value []byte) []byte {
	t.Helper()
	e, err := schemas.NewEncoder(s, from, message)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Encode(nil, value)
	if err != nil {
		t.Fatalf("encode %s: %v", value, err)
	}
	return b
}

func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("got  %s\nwant %s", gb, wb)
	}
}

// Records written with two versions of a subject's schema both decode,
// each with its writer's schema.
func TestAvroTwoVersions(t *testing.T) {
	ctx := context.Background()
	_, reg := newRegistry(t)
	v1 := register(t, reg, "bids-value", schemas.Avro, bidV1)
	v2 := register(t, reg, "bids-value", schemas.Avro, bidV2)
	if v1.ID == v2.ID || v2.Version != v1.Version+1 {
		t.Fatalf("ids %d %d versions %d %d", v1.ID, v2.ID, v1.Version, v2.Version)
	}
	old := encode(t, v1, schemas.JSON, "", []byte(`{"auction":7,"price":100,"bidder":{"id":3,"city":"Oslo"},"channel":"app","date_time":1700000000123,"extra":"AAE="}`))
	new := encode(t, v2, schemas.JSON, "", []byte(`{"auction":8,"price":5,"bidder":{"id":4},"channel":"web","date_time":1700000000456,"extra":"","tags":["a","b"]}`))
	if old[0] != 0 || int(old[4]) != v1.ID || int(new[4]) != v2.ID {
		t.Fatalf("headers % x / % x", old[:5], new[:5])
	}
	// A fresh client: the ids come from the registry.
	reg2, err := schemas.NewRegistry(reg.URL(), schemas.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := schemas.NewDecoder(reg2, schemas.Avro, schemas.JSON)
	got, err := d.Decode(ctx, nil, old)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"auction":7,"price":100,"bidder":{"id":3,"city":"Oslo"},"channel":"app","date_time":1700000000123,"extra":"AAE="}`)
	got, err = d.Decode(ctx, nil, new)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"auction":8,"price":5,"bidder":{"id":4,"city":null},"channel":"web","date_time":1700000000456,"extra":"","tags":["a","b"]}`)

	// As msgpack: the same value.
	dm := schemas.NewDecoder(reg2, schemas.Avro, schemas.Msgpack)
	mp, err := dm.Decode(ctx, nil, new)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(mp, &m); err != nil {
		t.Fatal(err)
	}
	if m["auction"] != int8(8) || m["bidder"].(map[string]any)["id"] != int8(4) || m["channel"] != "web" {
		t.Fatalf("msgpack %v", m)
	}
	// And back from msgpack to Avro: the same bytes.
	if again := encode(t, v2, schemas.Msgpack, "", mp); string(again) != string(new) {
		t.Fatalf("msgpack round trip % x, want % x", again, new)
	}
	if got, err := d.Decode(ctx, nil, nil); got != nil || err != nil {
		t.Fatalf("tombstone: %q %v", got, err)
	}
}

// Records that cannot be read say why, and never as ErrUnavailable.
func TestDecodeRefuses(t *testing.T) {
	ctx := context.Background()
	_, reg := newRegistry(t)
	v1 := register(t, reg, "bids-value", schemas.Avro, bidV1)
	p := register(t, reg, "counts-value", schemas.Protobuf, countProto)
	good := encode(t, v1, schemas.JSON, "", []byte(`{"auction":7,"price":100,"bidder":{"id":3},"channel":"app","date_time":1,"extra":""}`))
	d := schemas.NewDecoder(reg, schemas.Avro, schemas.JSON)
	for _, c := range []struct {
		name, want string
		value      []byte
	}{
		{"json", "wire format", []byte(`{"auction":1}`)},
		{"short", "wire format", []byte{0, 0, 1}},
		{"unknown id", "unknown schema", []byte{0, 0, 0, 0x30, 0x39, 2}},
		{"other format", "is protobuf, the source reads avro", append([]byte{0, 0, 0, 0, byte(p.ID)}, 0, 8, 1)},
		{"truncated", "not Avro", good[:len(good)-3]},
		{"trailing", "left after the value", append(append([]byte{}, good...), 1, 2)},
		{"enum", "no symbol", append(append([]byte{}, good[:len(good)-3]...), 0x40, 2, 0)},
		{"huge block", "more than the value can hold", blockBomb(register(t, reg, "bomb-value", schemas.Avro, `{"type":"array","items":"null"}`).ID)},
	} {
		_, err := d.Decode(ctx, nil, c.value)
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, schemas.ErrUnavailable) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// blockBomb is an Avro array of nulls (items that take no bytes) with
// schema id, claiming 2^40 items.
func blockBomb(id int) []byte {
	return binary.AppendVarint([]byte{0, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}, 1<<40)
}

func TestProtobuf(t *testing.T) {
	ctx := context.Background()
	_, reg := newRegistry(t)
	s := register(t, reg, "counts-value", schemas.Protobuf, countProto)
	in := `{"city":"Oslo","count":12345678901,"window":{"start":1,"end":2},"tags":["x"],"kind":"KIND_TUMBLING","blob":"AAE=","maybe":0}`
	b := encode(t, s, schemas.JSON, "Count", []byte(in))
	// Count is the file's second message: indexes [1].
	if b[5] != 2 || b[6] != 2 {
		t.Fatalf("message indexes % x", b[:8])
	}
	got, err := schemas.NewDecoder(reg, schemas.Protobuf, schemas.JSON).Decode(ctx, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, in)
	// A nested message by its full name.
	w := encode(t, s, schemas.JSON, "eddy.test.Count.Window", []byte(`{"start":5}`))
	got, err = schemas.NewDecoder(reg, schemas.Protobuf, schemas.JSON).Decode(ctx, nil, w)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"start":5,"end":0}`)

	e, err := schemas.NewEncoder(s, schemas.JSON, "Count")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"town":"x"}`, `{"count":"many"}`, `[1]`, `{"kind":"KIND_SESSION"}`, `not json`} {
		if _, err := e.Encode(nil, []byte(bad)); !errors.Is(err, schemas.ErrMisfit) {
			t.Errorf("%s: %v, want a misfit", bad, err)
		}
	}
	if _, err := schemas.NewEncoder(s, schemas.JSON, "Nope"); err == nil {
		t.Error("an unknown message type was accepted")
	}
	for _, idx := range [][]byte{{2, 40}, {4, 2, 8}, {0x7f}} {
		v := append([]byte{0, 0, 0, 0, byte(s.ID)}, idx...)
		if _, err := schemas.NewDecoder(reg, schemas.Protobuf, schemas.JSON).Decode(ctx, nil, v); !errors.Is(err, schemas.ErrMisfit) {
			t.Errorf("indexes % x: %v", idx, err)
		}
	}
}

func TestJSONSchema(t *testing.T) {
	ctx := context.Background()
	_, reg := newRegistry(t)
	s := register(t, reg, "prices-value", schemas.JSONSchema, priceSchema)
	b := encode(t, s, schemas.JSON, "", []byte(`{"auction":1,"price":2.5}`))
	got, err := schemas.NewDecoder(reg, schemas.JSONSchema, schemas.JSON).Decode(ctx, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"auction":1,"price":2.5}`)
	e, _ := schemas.NewEncoder(s, schemas.JSON, "")
	for _, bad := range []string{`{"auction":1}`, `{"auction":1,"price":-1}`, `{"auction":1,"price":1,"x":0}`} {
		if _, err := e.Encode(nil, []byte(bad)); !errors.Is(err, schemas.ErrMisfit) {
			t.Errorf("%s: %v, want a misfit", bad, err)
		}
	}
	// A value written past the schema is refused on reading too.
	v := append([]byte{0, 0, 0, 0, byte(s.ID)}, `{"auction":"x","price":1}`...)
	if _, err := schemas.NewDecoder(reg, schemas.JSONSchema, schemas.JSON).Decode(ctx, nil, v); !errors.Is(err, schemas.ErrMisfit) {
		t.Errorf("invalid value decoded: %v", err)
	}
	// A schema that references a file is refused: the node reads nothing
	// of its own because a registry said so.
	if _, err := reg.Register(ctx, "evil-value", schemas.JSONSchema, `{"$ref":"file:///etc/passwd"}`); !errors.Is(err, schemas.ErrBadSchema) {
		t.Errorf("a schema referencing a local file: %v", err)
	}
}

func TestAvroEncodeRefuses(t *testing.T) {
	_, reg := newRegistry(t)
	s := register(t, reg, "bids-value", schemas.Avro, bidV1)
	e, _ := schemas.NewEncoder(s, schemas.JSON, "")
	for _, bad := range []string{
		`{"auction":7}`, // missing fields without defaults
		`{"auction":7.5,"price":1,"bidder":{"id":3},"channel":"app","date_time":1,"extra":""}`,
		`{"auction":7,"price":1,"bidder":{"id":3},"channel":"fax","date_time":1,"extra":""}`,
		`{"auction":7,"price":1,"bidder":{"id":3,"city":5},"channel":"app","date_time":1,"extra":""}`,
		`{"auction":7,"price":1,"bidder":{"id":3},"channel":"app","date_time":1,"extra":"","more":1}`,
		`{"auction":7,"price":1,"bidder":{"id":3},"channel":"app","date_time":1,"extra":"%%"}`,
		`"text"`, `{`,
	} {
		if _, err := e.Encode(nil, []byte(bad)); !errors.Is(err, schemas.ErrMisfit) {
			t.Errorf("%s: %v, want a misfit", bad, err)
		}
	}
}

// A registry that cannot be reached is ErrUnavailable (try again), one
// that answers "not found" is ErrUnknownSchema (the record's fault).
func TestRegistryErrors(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error_code":50001,"message":"down"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	reg, _ := schemas.NewRegistry(srv.URL, schemas.Options{})
	if _, err := reg.ByID(ctx, 1); !errors.Is(err, schemas.ErrUnavailable) {
		t.Errorf("503: %v", err)
	}
	closed, _ := schemas.NewRegistry("http://127.0.0.1:1", schemas.Options{Timeout: time.Second})
	if err := closed.Ping(ctx); !errors.Is(err, schemas.ErrUnavailable) {
		t.Errorf("nothing listening: %v", err)
	}
	if _, err := schemas.NewRegistry("localhost:8081", schemas.Options{}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"schema":"`))
		w.Write([]byte(strings.Repeat("x", schemas.MaxResponse)))
		w.Write([]byte(`"}`))
	}))
	defer big.Close()
	breg, _ := schemas.NewRegistry(big.URL, schemas.Options{})
	if _, err := breg.ByID(ctx, 1); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a response past MaxResponse: %v", err)
	}
	fake, reg2 := newRegistry(t)
	if _, err := reg2.ByID(ctx, 99); !errors.Is(err, schemas.ErrUnknownSchema) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := reg2.Latest(ctx, "nope-value"); !errors.Is(err, schemas.ErrUnknownSchema) {
		t.Errorf("unknown subject: %v", err)
	}
	fake.SeedSchema("broken-value", 1, 50, sr.Schema{Schema: `{"type":"record","name":"X","fields":[{"name":"a","type":"nosuch"}]}`})
	if _, err := reg2.ByID(ctx, 50); !errors.Is(err, schemas.ErrBadSchema) {
		t.Errorf("a schema that does not parse: %v", err)
	}
}
