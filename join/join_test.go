package join

import (
	"bytes"
	"cmp"
	"errors"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// TestImports keeps the package pure: the standard library, abi and
// windowing only.
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.Split(p, "/")[0], ".") &&
				p != "github.com/eddy-streams/eddy/abi" && p != "github.com/eddy-streams/eddy/windowing" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"outer", Config{Type: OuterJoin, Before: time.Second, After: time.Second, Grace: time.Second, Disorder: time.Second, IdleTimeout: time.Minute}, true},
		{"unknown type", Config{Type: 3}, false},
		{"negative before", Config{Before: -time.Millisecond}, false},
		{"negative after", Config{After: -time.Millisecond}, false},
		{"sub-millisecond grace", Config{Grace: time.Microsecond}, false},
		{"negative disorder", Config{Disorder: -time.Second}, false},
		{"negative idle", Config{IdleTimeout: -time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("%v does not wrap ErrInvalidConfig", err)
			}
			if _, nerr := NewWindowJoin(tc.cfg, newMemBuffer()); (nerr == nil) != tc.ok {
				t.Fatalf("NewWindowJoin: %v", nerr)
			}
		})
	}
}

func TestParseType(t *testing.T) {
	for _, typ := range []Type{InnerJoin, LeftJoin, OuterJoin} {
		if got, err := ParseType(typ.String()); err != nil || got != typ {
			t.Errorf("ParseType(%q) = %v, %v", typ, got, err)
		}
	}
	if _, err := ParseType("full"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseType(full): %v", err)
	}
	if s := Type(9).String(); s != "join(9)" {
		t.Errorf("String() = %q", s)
	}
	if s := Side(2).String(); s != "side(2)" {
		t.Errorf("String() = %q", s)
	}
}

func TestNewTableJoinType(t *testing.T) {
	if _, err := NewTableJoin(OuterJoin, memTable{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("outer stream-table join: %v", err)
	}
	if j, err := NewTableJoin(LeftJoin, memTable{}); err != nil || j.Type() != LeftJoin {
		t.Fatalf("left stream-table join: %v", err)
	}
}

func recordsEqual(a, b *abi.Record) bool {
	nb := func(x, y []byte) bool { return bytes.Equal(x, y) && (x == nil) == (y == nil) }
	return nb(a.Key, b.Key) && nb(a.Value, b.Value) && a.Timestamp == b.Timestamp &&
		slices.EqualFunc(a.Headers, b.Headers, func(x, y abi.Header) bool { return x.Key == y.Key && nb(x.Value, y.Value) })
}

var codecCases = []abi.Record{
	{},
	{Key: []byte{}, Value: []byte{}},
	{Key: []byte("k"), Value: []byte("v"), Timestamp: 1_700_000_000_000},
	{Key: nil, Value: []byte("v"), Timestamp: -5},
	{Key: []byte("k"), Value: nil, Timestamp: math.MinInt64},
	{Key: []byte("k"), Timestamp: math.MaxInt64, Headers: []abi.Header{{Key: "a", Value: []byte("1")}, {Key: "", Value: nil}, {Key: "e", Value: []byte{}}}},
	{Key: bytes.Repeat([]byte("x"), 300), Value: bytes.Repeat([]byte{0}, 70000)},
}

func TestRecordCodec(t *testing.T) {
	for i, rec := range codecCases {
		b := AppendRecord([]byte("prefix"), &rec)
		var got abi.Record
		if err := DecodeRecord(b[len("prefix"):], &got); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !recordsEqual(&got, &rec) {
			t.Fatalf("case %d: got %+v, want %+v", i, got, rec)
		}
		enc := b[len("prefix"):]
		for n := range len(enc) {
			if err := DecodeRecord(enc[:n], &got); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("case %d: prefix of %d bytes: %v", i, n, err)
			}
		}
		if err := DecodeRecord(append(slices.Clone(enc), 0), &got); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("case %d: trailing byte: %v", i, err)
		}
	}
	if err := DecodeRecord([]byte{2, 0, 0, 0, 0}, new(abi.Record)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("version 2: %v", err)
	}
}

// FuzzDecodeRecord checks that DecodeRecord never panics and that what it
// accepts re-encodes to bytes that decode to the same record.
func FuzzDecodeRecord(f *testing.F) {
	for _, rec := range codecCases[:6] {
		f.Add(AppendRecord(nil, &rec))
	}
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var rec abi.Record
		if err := DecodeRecord(b, &rec); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		var again abi.Record
		if err := DecodeRecord(AppendRecord(nil, &rec), &again); err != nil || !recordsEqual(&rec, &again) {
			t.Fatalf("re-decoded %+v, %v; want %+v", again, err, rec)
		}
	})
}

// TestBufferKeyOrder checks that, within a side and key, the bytewise
// order of buffer keys is the (t, seq) order, and that keys parse back.
func TestBufferKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	type tuple struct {
		side Side
		key  []byte
		t    int64
		seq  uint64
	}
	times := []int64{math.MinInt64, -1 << 40, -1, 0, 1, 1 << 40, math.MaxInt64}
	var ts []tuple
	for range 500 {
		tp := tuple{side: Side(rng.IntN(2)), key: []byte(strings.Repeat("k", rng.IntN(3))), seq: rng.Uint64N(4)}
		if rng.IntN(2) == 0 {
			tp.t = times[rng.IntN(len(times))]
		} else {
			tp.t = rng.Int64N(2000) - 1000
		}
		if rng.IntN(10) == 0 {
			tp.seq = math.MaxUint64
		}
		ts = append(ts, tp)
	}
	for _, a := range ts {
		ka := AppendBufferKey(nil, a.side, a.key, a.t, a.seq)
		side, key, tm, seq, err := ParseBufferKey(ka)
		if err != nil || side != a.side || !bytes.Equal(key, a.key) || tm != a.t || seq != a.seq {
			t.Fatalf("ParseBufferKey(%x) = %v %q %d %d %v, want %+v", ka, side, key, tm, seq, err, a)
		}
		for _, b := range ts {
			if a.side != b.side || !bytes.Equal(a.key, b.key) {
				continue
			}
			kb := AppendBufferKey(nil, b.side, b.key, b.t, b.seq)
			if got, want := bytes.Compare(ka, kb), cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.seq, b.seq)); got != want {
				t.Fatalf("%+v vs %+v: bytes compare %d, tuples %d", a, b, got, want)
			}
		}
	}
	for _, bad := range [][]byte{nil, {0}, {2, 0}, {0, 5, 'a'}, append(AppendBufferKey(nil, Left, []byte("k"), 1, 1), 0)} {
		if _, _, _, _, err := ParseBufferKey(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseBufferKey(%x): %v", bad, err)
		}
	}
}

func TestProcessBadSide(t *testing.T) {
	j, _ := NewWindowJoin(Config{}, newMemBuffer())
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	_ = j.Process(2, 0, &abi.Record{Key: []byte("k")}, &Output{})
}

func TestNoTimestamp(t *testing.T) {
	cfg := Config{Time: windowing.ExtractorFunc(func(*abi.Record) (int64, error) {
		return 0, windowing.ErrNoTimestamp
	})}
	j, _ := NewWindowJoin(cfg, newMemBuffer())
	err := j.Process(Left, 3, &abi.Record{Key: []byte("k")}, &Output{})
	if !errors.Is(err, windowing.ErrNoTimestamp) {
		t.Fatalf("Process: %v", err)
	}
	if s := j.Stats(); s.Left != 0 || s.Buffered != 0 {
		t.Fatalf("the record was used: %+v", s)
	}
}

// failBuffer fails the named method.
type failBuffer struct {
	*memBuffer
	fail string
}

var errStore = errors.New("store down")

func (b failBuffer) Put(side Side, key []byte, t int64, seq uint64, rec []byte, matched bool) error {
	if b.fail == "put" {
		return errStore
	}
	return b.memBuffer.Put(side, key, t, seq, rec, matched)
}

func (b failBuffer) Scan(side Side, key []byte, from, to int64, fn func(int64, uint64, []byte, bool) error) error {
	if b.fail == "scan" {
		return errStore
	}
	return b.memBuffer.Scan(side, key, from, to, fn)
}

func (b failBuffer) SetMatched(side Side, key []byte, t int64, seq uint64) error {
	if b.fail == "setmatched" {
		return errStore
	}
	return b.memBuffer.SetMatched(side, key, t, seq)
}

func (b failBuffer) Delete(side Side, key []byte, t int64, seq uint64) error {
	if b.fail == "delete" {
		return errStore
	}
	return b.memBuffer.Delete(side, key, t, seq)
}

func (b failBuffer) Walk(fn func(Side, []byte, int64, uint64) error) error {
	if b.fail == "walk" {
		return errStore
	}
	return b.memBuffer.Walk(fn)
}

// TestBufferErrors checks that every Buffer error reaches the caller
// wrapped.
func TestBufferErrors(t *testing.T) {
	for _, method := range []string{"put", "scan", "setmatched", "delete", "walk"} {
		t.Run(method, func(t *testing.T) {
			buf := failBuffer{memBuffer: newMemBuffer()}
			j, _ := NewWindowJoin(Config{Type: OuterJoin, Before: 5 * time.Millisecond, After: 5 * time.Millisecond}, buf)
			var out Output
			if err := j.Process(Left, 0, &abi.Record{Key: []byte("k"), Timestamp: 1}, &out); err != nil {
				t.Fatal(err)
			}
			buf.fail = method
			j.buf = buf
			err := j.Process(Right, 1, &abi.Record{Key: []byte("k"), Timestamp: 2}, &out)
			if err == nil {
				err = j.Flush(&out)
			}
			if method == "walk" {
				j2, _ := NewWindowJoin(Config{}, buf)
				err = j2.Restore(0)
			}
			if !errors.Is(err, errStore) {
				t.Fatalf("got %v, want the store error", err)
			}
		})
	}
}

// TestLostEntry checks that an entry the index knows of but the buffer lost
// is reported as corruption when it expires.
func TestLostEntry(t *testing.T) {
	buf := newMemBuffer()
	j, _ := NewWindowJoin(Config{Type: LeftJoin}, buf)
	var out Output
	if err := j.Process(Left, 0, &abi.Record{Key: []byte("k"), Timestamp: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if err := buf.Delete(Left, []byte("k"), 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(&out); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Flush: %v", err)
	}
}

func TestRestoreInUse(t *testing.T) {
	buf := newMemBuffer()
	j, _ := NewWindowJoin(Config{}, buf)
	if err := j.Process(Left, 0, &abi.Record{Key: []byte("k"), Timestamp: 1}, &Output{}); err != nil {
		t.Fatal(err)
	}
	if err := j.Restore(0); err == nil {
		t.Fatal("Restore after Process succeeded")
	}
	j, _ = NewWindowJoin(Config{}, buf)
	if err := j.Restore(0); err != nil {
		t.Fatal(err)
	}
	if err := j.Restore(0); err == nil {
		t.Fatal("a second Restore succeeded")
	}
}

// TestRestoreSequence checks that sequence numbers continue after the
// largest restored one, so that a record of the same side, key and time
// as a restored one gets a new entry ordered after it.
func TestRestoreSequence(t *testing.T) {
	buf := newMemBuffer()
	cfg := Config{Type: LeftJoin, Disorder: 10 * time.Millisecond}
	j, _ := NewWindowJoin(cfg, buf)
	var out Output
	for _, v := range []string{"a", "b"} {
		if err := j.Process(Left, 0, &abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: 5}, &out); err != nil {
			t.Fatal(err)
		}
	}
	wm := j.Watermark()
	j, _ = NewWindowJoin(cfg, buf)
	if err := j.Restore(wm); err != nil {
		t.Fatal(err)
	}
	if err := j.Process(Left, 0, &abi.Record{Key: []byte("k"), Value: []byte("c"), Timestamp: 5}, &out); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(&out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range out.Pairs {
		got = append(got, string(p.Left.Value))
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("unmatched %q, want %q (arrival order)", got, want)
	}
}

// TestRestoreExpired checks that entries already expired at the restored
// watermark are emitted at the next Advance.
func TestRestoreExpired(t *testing.T) {
	buf := newMemBuffer()
	rec := abi.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: 5}
	if err := buf.Put(Left, rec.Key, 5, 7, AppendRecord(nil, &rec), false); err != nil {
		t.Fatal(err)
	}
	j, _ := NewWindowJoin(Config{Type: LeftJoin}, buf)
	if err := j.Restore(100); err != nil {
		t.Fatal(err)
	}
	var out Output
	if err := j.Advance(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pairs) != 1 || string(out.Pairs[0].Left.Value) != "v" || buf.n != 0 {
		t.Fatalf("pairs %+v, buffer %d", out.Pairs, buf.n)
	}
}

// failTable fails every call.
type failTable struct{}

func (failTable) Get([]byte) ([]byte, bool, error) { return nil, false, errStore }
func (failTable) Put(_, _ []byte) error            { return errStore }
func (failTable) Delete([]byte) error              { return errStore }

func TestTableErrors(t *testing.T) {
	j, err := NewTableJoin(LeftJoin, failTable{})
	if err != nil {
		t.Fatal(err)
	}
	k := []byte("k")
	for name, err := range map[string]error{
		"put":    j.Update(&abi.Record{Key: k, Value: k}),
		"delete": j.Update(&abi.Record{Key: k}),
		"get":    j.Lookup(&abi.Record{Key: k}, &Output{}),
	} {
		if !errors.Is(err, errStore) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := j.Lookup(&abi.Record{}, &Output{}); err != nil {
		t.Errorf("a null key reached the table: %v", err)
	}
}

// nopBuffer stores nothing: it measures the WindowJoin's own allocations.
type nopBuffer struct{}

func (nopBuffer) Put(Side, []byte, int64, uint64, []byte, bool) error { return nil }
func (nopBuffer) Scan(Side, []byte, int64, int64, func(int64, uint64, []byte, bool) error) error {
	return nil
}
func (nopBuffer) SetMatched(Side, []byte, int64, uint64) error       { return nil }
func (nopBuffer) Delete(Side, []byte, int64, uint64) error           { return nil }
func (nopBuffer) Walk(func(Side, []byte, int64, uint64) error) error { return nil }

// TestProcessAllocs holds Process of an inner join to one allocation per
// record (the key in the expiry index) when the buffer allocates nothing.
func TestProcessAllocs(t *testing.T) {
	j, _ := NewWindowJoin(Config{Before: 10 * time.Millisecond, After: 10 * time.Millisecond}, nopBuffer{})
	var out Output
	rec := abi.Record{Key: []byte("key"), Value: []byte("value")}
	n := 0
	allocs := testing.AllocsPerRun(1000, func() {
		rec.Timestamp = int64(n)
		if err := j.Process(Side(n%2), int32(n%2), &rec, &out); err != nil {
			t.Fatal(err)
		}
		n++
	})
	if allocs > 1 {
		t.Fatalf("%.1f allocations per record, want at most 1", allocs)
	}
}

// maxDuration is the largest join window, grace or disorder there is.
const maxDuration = time.Duration(math.MaxInt64) / time.Millisecond * time.Millisecond

// TestExtremeTimes joins records at the ends of the event-time range with
// the largest windows and grace there are: every sum of them must stay
// ordered (no wrap-around into the past), and the buffer must empty at
// Flush.
func TestExtremeTimes(t *testing.T) {
	buf := newMemBuffer()
	j, _ := NewWindowJoin(Config{Type: OuterJoin, Before: maxDuration, After: maxDuration, Grace: maxDuration, Disorder: maxDuration}, buf)
	j.Assign(0, 1)
	var out Output
	recs := []abi.Record{
		{Key: []byte("k"), Value: []byte("min"), Timestamp: windowing.MinTime},
		{Key: []byte("k"), Value: []byte("zero"), Timestamp: 0},
		{Key: []byte("k"), Value: []byte("max"), Timestamp: windowing.MaxTime},
	}
	if err := j.ProcessBatch(Left, 0, recs, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pairs)+len(out.Late) != 0 {
		t.Fatalf("emitted before the end: %+v", out)
	}
	if err := j.ProcessBatch(Right, 1, recs[2:], &out); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(&out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range out.Pairs {
		got = append(got, pairID(p.Key, p.Left, p.Right))
	}
	if want := []string{"k max max", "k min -", "k zero -"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if buf.n != 0 {
		t.Fatalf("%d records left", buf.n)
	}
}

// TestTimesOutOfRange: a record whose time is outside the event-time range
// is refused with an error wrapping ErrTimeRange and ErrNoTimestamp (the
// host dead-letters it), leaving no trace — not buffered, the watermark
// unmoved — and the next records join normally. So is a progress report
// of such a time.
func TestTimesOutOfRange(t *testing.T) {
	buf := newMemBuffer()
	j, _ := NewWindowJoin(Config{Type: OuterJoin, Before: time.Second, After: time.Second, Grace: maxDuration, Disorder: maxDuration}, buf)
	var out Output
	rec := abi.Record{Key: []byte("k"), Value: []byte("a"), Timestamp: 1000}
	if err := j.Process(Left, 0, &rec, &out); err != nil {
		t.Fatal(err)
	}
	wm := j.Watermark()
	for _, ts := range []int64{math.MinInt64, math.MinInt64 + 1, windowing.MinTime - 1, windowing.MaxTime + 1, math.MaxInt64 - 1, math.MaxInt64} {
		for _, side := range []Side{Left, Right} {
			bad := abi.Record{Key: []byte("k"), Value: []byte("bad"), Timestamp: ts}
			err := j.Process(side, int32(side), &bad, &out)
			if !errors.Is(err, windowing.ErrTimeRange) || !errors.Is(err, windowing.ErrNoTimestamp) ||
				!strings.Contains(err.Error(), "event time "+strconv.FormatInt(ts, 10)+" out of range") {
				t.Fatalf("%v record at %d: err = %v, want an out-of-range error", side, ts, err)
			}
		}
		if err := j.Progress(1, ts, &out); !errors.Is(err, windowing.ErrTimeRange) {
			t.Fatalf("progress to %d: err = %v, want ErrTimeRange", ts, err)
		}
		if buf.n != 1 || j.Watermark() != wm || len(out.Pairs)+len(out.Late) != 0 {
			t.Fatalf("after a record at %d: %d buffered, watermark %d (was %d), output %+v", ts, buf.n, j.Watermark(), wm, out)
		}
	}
	rec2 := abi.Record{Key: []byte("k"), Value: []byte("b"), Timestamp: 1500}
	if err := j.Process(Right, 1, &rec2, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pairs) != 1 || pairID(out.Pairs[0].Key, out.Pairs[0].Left, out.Pairs[0].Right) != "k a b" {
		t.Fatalf("pairs %+v, want k a b", out.Pairs)
	}
}

// TestRestoreOutOfRange: a buffered entry whose time is outside the
// event-time range (written before times were checked, or corrupt) expires
// at the first watermark instead of staying forever.
func TestRestoreOutOfRange(t *testing.T) {
	buf := newMemBuffer()
	if err := buf.Put(Left, []byte("k"), math.MaxInt64, 7, AppendRecord(nil, &abi.Record{Key: []byte("k"), Value: []byte("old")}), false); err != nil {
		t.Fatal(err)
	}
	j, _ := NewWindowJoin(Config{Type: LeftJoin}, buf)
	if err := j.Restore(windowing.NoWatermark); err != nil {
		t.Fatal(err)
	}
	var out Output
	if err := j.Progress(0, 0, &out); err != nil {
		t.Fatal(err)
	}
	if buf.n != 0 || len(out.Pairs) != 1 || string(out.Pairs[0].Left.Value) != "old" {
		t.Fatalf("%d buffered, pairs %+v: want the old entry emitted unmatched and gone", buf.n, out.Pairs)
	}
}
