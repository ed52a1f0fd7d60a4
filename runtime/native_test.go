package runtime_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// The natives below are the reference Go guests (guests/go/<name>/main.go,
// built into testdata/go) written as runtime.Natives: the same logic, with
// encoding/json standing in for the guests' allocation-free scanner. The
// tests run both through the same Instance methods and compare the answers.

// upperNative is guests/go/upper: upper-case the value (ASCII eight bytes at
// a time, else rune by rune keeping invalid bytes), keep nil and empty
// values as they are. Each instance reuses one buffer, as the guest does.
func upperNative() runtime.Native {
	var buf []byte
	return runtime.Native{Name: "upper", Version: "1.0.0", Process: func(r *abi.Record, emit func(abi.Record)) error {
		out := *r
		if len(r.Value) > 0 {
			buf = append(buf[:0], r.Value...)
			if !upperASCII(buf) {
				buf = appendUpper(buf[:0], r.Value)
			}
			out.Value = buf
		}
		emit(out)
		return nil
	}}
}

// upperASCII upper-cases d in place, eight bytes at a time, and reports
// false if d is not all ASCII (d is then garbage).
func upperASCII(d []byte) bool {
	const highBits, ones = 0x8080808080808080, 0x0101010101010101
	i := 0
	for ; len(d)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(d[i:])
		if x&highBits != 0 {
			return false
		}
		lower := (x + (0x80-'a')*ones) &^ (x + (0x80-'z'-1)*ones) & highBits
		binary.LittleEndian.PutUint64(d[i:], x^lower>>2)
	}
	for ; i < len(d); i++ {
		c := d[i]
		if c >= utf8.RuneSelf {
			return false
		}
		if 'a' <= c && c <= 'z' {
			d[i] = c - ('a' - 'A')
		}
	}
	return true
}

// appendUpper is the guest's slow path: rune by rune, invalid bytes kept.
func appendUpper(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, c)
		} else {
			dst = utf8.AppendRune(dst, unicode.ToUpper(r))
		}
		i += n
	}
	return dst
}

// jsonField is guests/go/internal/jsonscan.Field: the raw value of a
// top-level member of a JSON object (the last one if it repeats).
func jsonField(doc []byte, name string) ([]byte, bool, error) {
	if !json.Valid(doc) {
		return nil, false, errors.New("invalid JSON")
	}
	if t := bytes.TrimLeft(doc, " \t\r\n"); t[0] != '{' {
		return nil, false, errors.New("not a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, false, err
	}
	v, ok := m[name]
	return bytes.TrimSpace(v), ok, nil
}

// jsonNumber is jsonscan.Number: doc, without JSON white space around it,
// if that is one JSON number.
func jsonNumber(doc []byte) ([]byte, bool) {
	t := bytes.Trim(doc, " \t\r\n")
	if len(t) == 0 || !(t[0] == '-' || '0' <= t[0] && t[0] <= '9') || !json.Valid(t) {
		return nil, false
	}
	return t, true
}

// filterNative is guests/go/filter: keep objects whose top-level "amount"
// is a number of at least 100, drop other objects, refuse anything else
// with BAD_INPUT.
func filterNative() runtime.Native {
	return runtime.Native{Name: "filter", Version: "1.0.0", Process: func(r *abi.Record, emit func(abi.Record)) error {
		v, found, err := jsonField(r.Value, "amount")
		if err != nil {
			return runtime.BadInput(err)
		}
		if !found {
			return nil
		}
		if _, ok := jsonNumber(v); !ok {
			return nil
		}
		if amount, _ := strconv.ParseFloat(string(v), 64); amount >= 100 {
			emit(*r)
		}
		return nil
	}}
}

// splitNative is guests/go/split: one record per white-space-separated
// word, with the input's key and timestamp and no headers.
func splitNative() runtime.Native {
	return runtime.Native{Name: "split", Version: "1.0.0", Process: func(r *abi.Record, emit func(abi.Record)) error {
		for _, w := range bytes.Fields(r.Value) {
			emit(abi.Record{Key: r.Key, Value: w, Timestamp: r.Timestamp})
		}
		return nil
	}}
}

// statsNative is guests/go/stats: count, sum and average of JSON numbers,
// in a 16-byte accumulator updated in place.
func statsNative() runtime.Native {
	decode := func(acc []byte) (int64, float64, error) {
		if len(acc) != 16 {
			return 0, 0, fmt.Errorf("accumulator is %d bytes, want 16", len(acc))
		}
		return int64(binary.LittleEndian.Uint64(acc)), math.Float64frombits(binary.LittleEndian.Uint64(acc[8:])), nil
	}
	encode := func(acc []byte, count int64, sum float64) []byte {
		binary.LittleEndian.PutUint64(acc, uint64(count))
		binary.LittleEndian.PutUint64(acc[8:], math.Float64bits(sum))
		return acc
	}
	number := func(b []byte, f float64) []byte {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(b, "null"...)
		}
		format := byte('f')
		if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			format = 'e'
		}
		b = strconv.AppendFloat(b, f, format, -1, 64)
		if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	var zero [16]byte
	return runtime.Native{
		Name: "stats", Version: "1.0.0",
		AggInit: func() []byte { return zero[:] },
		AggAdd: func(acc []byte, r *abi.Record) ([]byte, error) {
			count, sum, err := decode(acc)
			if err != nil {
				return nil, err
			}
			tok, ok := jsonNumber(r.Value)
			if !ok {
				return nil, runtime.BadInput(errors.New("value is not a JSON number"))
			}
			v, err := strconv.ParseFloat(string(tok), 64)
			if err != nil {
				return nil, runtime.BadInput(errors.New("value is out of the float64 range"))
			}
			return encode(acc, count+1, sum+v), nil
		},
		AggMerge: func(_, a, b []byte) ([]byte, error) {
			ca, sa, err := decode(a)
			if err != nil {
				return nil, err
			}
			cb, sb, err := decode(b)
			if err != nil {
				return nil, err
			}
			return encode(make([]byte, 16), ca+cb, sa+sb), nil
		},
		AggResult: func(_, acc []byte) ([]byte, error) {
			count, sum, err := decode(acc)
			if err != nil {
				return nil, err
			}
			b := fmt.Appendf(nil, `{"count":%d,"sum":`, count)
			b = number(b, sum)
			b = append(b, `,"avg":`...)
			b = number(b, sum/float64(count))
			return append(b, '}'), nil
		},
	}
}

// joinerNative is guests/go/joiner: {"left":L,"right":R} of two JSON values,
// null for a missing side, nothing when both are missing. It reuses one
// buffer per instance.
func joinerNative() runtime.Native {
	var buf []byte
	raw := func(b, v []byte) []byte {
		if v == nil {
			return append(b, "null"...)
		}
		return append(b, v...)
	}
	return runtime.Native{Name: "joiner", Version: "1.0.0", Join: func(_, left, right []byte) ([]byte, error) {
		if left == nil && right == nil {
			return nil, nil
		}
		if left != nil && !json.Valid(left) {
			return nil, runtime.BadInput(errors.New("left value is not valid JSON"))
		}
		if right != nil && !json.Valid(right) {
			return nil, runtime.BadInput(errors.New("right value is not valid JSON"))
		}
		buf = raw(append(buf[:0], `{"left":`...), left)
		buf = append(raw(append(buf, `,"right":`...), right), '}')
		return buf, nil
	}}
}

// wordkeyNative is guests/go/wordkey: the key is the value's first word, the
// event time its top-level integer "ts".
func wordkeyNative() runtime.Native {
	return runtime.Native{
		Name: "wordkey", Version: "1.0.0",
		Key: func(r *abi.Record) ([]byte, error) {
			if w := bytes.Fields(r.Value); len(w) > 0 {
				return w[0], nil
			}
			return nil, nil
		},
		Timestamp: func(r *abi.Record) (int64, error) {
			v, found, err := jsonField(r.Value, "ts")
			switch {
			case err != nil:
				return 0, runtime.BadInput(err)
			case !found:
				return 0, runtime.BadInput(errors.New(`no top-level "ts" member`))
			}
			ts, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return 0, runtime.BadInput(errors.New(`"ts" is not an integer`))
			}
			return ts, nil
		},
	}
}

// loadNative loads a native named like the guest it stands for, so that the
// two give equal *Errors.
func loadNative(t testing.TB, e *runtime.Engine, name string, n func() runtime.Native, opts ...runtime.Option) *runtime.Function {
	t.Helper()
	f, err := e.LoadNativeFunc(name, n, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(context.Background()) })
	return f
}

// twins returns an instance of a reference guest and one of its native twin.
func twins(t *testing.T, e *runtime.Engine, guest string, n func() runtime.Native) (g, nat *runtime.Instance) {
	t.Helper()
	ctx := context.Background()
	gf := load(t, e, "go/"+guest+".wasm")
	nf := loadNative(t, e, guest+".wasm", n)
	g, err := gf.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gf.Release(ctx, g) })
	nat, err = nf.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nf.Release(ctx, nat) })
	return g, nat
}

// sameBytes is bytes.Equal that also tells nil from empty.
func sameBytes(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

func recordsDiffer(a, b *abi.Record) string {
	switch {
	case !sameBytes(a.Key, b.Key):
		return fmt.Sprintf("key %q (nil %t) != %q (nil %t)", a.Key, a.Key == nil, b.Key, b.Key == nil)
	case !sameBytes(a.Value, b.Value):
		return fmt.Sprintf("value %q (nil %t) != %q (nil %t)", a.Value, a.Value == nil, b.Value, b.Value == nil)
	case a.Timestamp != b.Timestamp:
		return fmt.Sprintf("timestamp %d != %d", a.Timestamp, b.Timestamp)
	case len(a.Headers) != len(b.Headers) || (a.Headers == nil) != (b.Headers == nil):
		return fmt.Sprintf("headers %v != %v", a.Headers, b.Headers)
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !sameBytes(a.Headers[i].Value, b.Headers[i].Value) {
			return fmt.Sprintf("header %d: %+v != %+v", i, a.Headers[i], b.Headers[i])
		}
	}
	return ""
}

// sameErrors compares what callers branch on (the reasons are the
// implementations' own words).
func sameErrors(t *testing.T, what string, guest, native []*runtime.Error) {
	t.Helper()
	if len(guest) != len(native) {
		t.Fatalf("%s: guest failed %v, native %v", what, guest, native)
	}
	for i, g := range guest {
		n := native[i]
		if !sameError(g, n) {
			t.Errorf("%s: failure %d: guest %+v, native %+v", what, i, g, n)
		}
	}
}

func sameError(g, n *runtime.Error) bool {
	if g == nil || n == nil {
		return g == n
	}
	return g.Function == n.Function && g.Kind == n.Kind && g.Cause == n.Cause && g.Code == n.Code &&
		g.Index == n.Index && g.Group == n.Group && n.Reason != "" && g.CodeString() == n.CodeString()
}

var processInputs = []abi.Record{
	{Key: []byte("k"), Value: []byte("hello world"), Timestamp: 1,
		Headers: []abi.Header{{Key: "h", Value: []byte("v")}, {Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}}},
	{Key: nil, Value: nil, Timestamp: 2},
	{Key: []byte{}, Value: []byte{}, Timestamp: 3},
	{Key: []byte("u"), Value: []byte("straße café \xff  tabs\tand\nnew lines\u00a0nbsp"), Timestamp: 4},
	{Value: []byte(`{"amount": 150, "note": "big one"}`), Timestamp: 5, Headers: []abi.Header{{Key: "x", Value: []byte("y")}}},
	{Value: []byte(`{"amount": 99.5}`), Timestamp: 6},
	{Value: []byte(`{"nested": {"amount": 500}, "amount": "100"}`), Timestamp: 7},
	{Value: []byte(`{"amount": 1, "amount": 100}`), Timestamp: 8},
	{Value: []byte(`[1, 2]`), Timestamp: 9},
	{Value: []byte(`{"amount": 100`), Timestamp: 10},
	{Value: []byte(` {"amount":1e3} `), Timestamp: -11},
	{Value: []byte("   "), Timestamp: 12},
	{Value: []byte(`{"amount": -1e400, "b": [1, {"c": null}]}`), Timestamp: 13},
	{Key: []byte("big"), Value: bytes.Repeat([]byte("abc def "), 1000), Timestamp: 14},
}

func TestNativeProcessMatchesGuests(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		name   string
		native func() runtime.Native
	}{
		{"upper", upperNative},
		{"filter", filterNative},
		{"split", splitNative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g, n := twins(t, e, tc.name, tc.native)
			var gout, nout runtime.Output
			// Twice into the same Outputs: the second batch appends after
			// the first, with its own indexes.
			for range 2 {
				if err := g.Process(ctx, processInputs, &gout); err != nil {
					t.Fatal(err)
				}
				if err := n.Process(ctx, processInputs, &nout); err != nil {
					t.Fatal(err)
				}
			}
			if len(gout.Records) != len(nout.Records) {
				t.Fatalf("guest gave %d records, native %d", len(gout.Records), len(nout.Records))
			}
			if len(gout.Records) == 0 {
				t.Fatal("no records")
			}
			for i := range gout.Records {
				if d := recordsDiffer(&gout.Records[i], &nout.Records[i]); d != "" || gout.From[i] != nout.From[i] {
					t.Errorf("record %d (from %d, %d): %s", i, gout.From[i], nout.From[i], d)
				}
			}
			sameErrors(t, "process", gout.Failed, nout.Failed)
		})
	}
}

func TestNativeAggregateMatchesGuest(t *testing.T) {
	ctx := context.Background()
	g, n := twins(t, newEngine(t), "stats", statsNative)
	rec := func(v string) abi.Record { return abi.Record{Value: []byte(v)} }
	gInit, err := g.AggInit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nInit, err := n.AggInit(ctx)
	if err != nil || !sameBytes(gInit, nInit) {
		t.Fatalf("init: guest %x, native %x (%v)", gInit, nInit, err)
	}
	groups := []abi.Group{
		{Key: []byte("a"), Records: []abi.Record{rec("1"), rec(" 2.5 "), rec("x"), rec("3"), {}, rec("1e400"), rec("-1e3")}},
		{Key: []byte("b"), Records: []abi.Record{rec("10")}},
		{Key: nil},
		{Key: []byte("bad"), Acc: []byte("12345"), Records: []abi.Record{rec("1"), rec("2")}},
		{Key: []byte("empty"), Acc: []byte{}},
	}
	run := func(inst *runtime.Instance, groups []abi.Group) ([]abi.Added, []*runtime.Error) {
		prefix := []abi.Added{{Acc: []byte("kept")}}
		added, failed, err := inst.AggAdd(ctx, groups, prefix, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(added[0].Acc) != "kept" {
			t.Fatal("AggAdd did not append to out")
		}
		return added[1:], failed
	}
	gAdded, gFailed := run(g, groups)
	nAdded, nFailed := run(n, groups)
	sameErrors(t, "add", gFailed, nFailed)
	if len(gAdded) != len(nAdded) {
		t.Fatalf("added: guest %d, native %d", len(gAdded), len(nAdded))
	}
	for i := range gAdded {
		if !sameBytes(gAdded[i].Acc, nAdded[i].Acc) || len(nAdded[i].Errors) != 0 {
			t.Errorf("group %d: guest acc %x, native %x %v", i, gAdded[i].Acc, nAdded[i].Acc, nAdded[i].Errors)
		}
	}
	// Fold more into a's accumulator, then merge and read results.
	more := []abi.Group{{Key: []byte("a"), Acc: nAdded[0].Acc, Records: []abi.Record{rec("4")}}}
	gMore, _ := run(g, more)
	nMore, _ := run(n, more)
	if !sameBytes(gMore[0].Acc, nMore[0].Acc) {
		t.Fatalf("second add: guest %x, native %x", gMore[0].Acc, nMore[0].Acc)
	}
	keys := [][]byte{[]byte("a"), []byte("x"), nil}
	as := [][]byte{nMore[0].Acc, []byte("short"), nInit}
	bs := [][]byte{nAdded[1].Acc, nInit, nInit}
	gMerged, err := g.AggMerge(ctx, keys, as, bs, nil)
	if err != nil {
		t.Fatal(err)
	}
	nMerged, err := n.AggMerge(ctx, keys, as, bs, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "merge", gMerged, nMerged)
	accs := [][]byte{nMore[0].Acc, nMerged[0].Bytes, nInit, []byte("bad"), nAdded[0].Acc}
	rkeys := [][]byte{[]byte("a"), []byte("m"), []byte("zero"), []byte("bad"), nil}
	gRes, err := g.AggResult(ctx, rkeys, accs, nil)
	if err != nil {
		t.Fatal(err)
	}
	nRes, err := n.AggResult(ctx, rkeys, accs, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "result", gRes, nRes)
	if got := string(nRes[1].Bytes); got != `{"count":6,"sum":-979.5,"avg":-163.25}` {
		t.Errorf("merged result %s", got)
	}
}

func sameResults(t *testing.T, what string, guest, native []runtime.Result) {
	t.Helper()
	if len(guest) != len(native) {
		t.Fatalf("%s: guest %d results, native %d", what, len(guest), len(native))
	}
	for i := range guest {
		g, n := guest[i], native[i]
		if !sameBytes(g.Bytes, n.Bytes) || g.Int != n.Int || !sameError(g.Err, n.Err) {
			t.Errorf("%s %d: guest {%q %d %v}, native {%q %d %v}", what, i, g.Bytes, g.Int, g.Err, n.Bytes, n.Int, n.Err)
		}
	}
}

func TestNativeJoinMatchesGuest(t *testing.T) {
	ctx := context.Background()
	g, n := twins(t, newEngine(t), "joiner", joinerNative)
	keys := [][]byte{[]byte("k"), nil, []byte("k2"), []byte("k3"), []byte("k4"), {}}
	left := [][]byte{[]byte(`{"a":1}`), nil, nil, []byte(`bad`), {}, []byte(` [1, "x"] `)}
	right := [][]byte{nil, []byte(`2`), nil, []byte(`1`), []byte(`[]`), []byte(`"s"`)}
	gr, err := g.Join(ctx, keys, left, right, nil)
	if err != nil {
		t.Fatal(err)
	}
	nr, err := n.Join(ctx, keys, left, right, []runtime.Result{})
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "join", gr, nr)
	if nr[2].Bytes != nil || nr[2].Err != nil || nr[3].Err.Code != abi.CodeBadInput {
		t.Fatalf("results %+v %+v", nr[2], nr[3])
	}
}

func TestNativeKeyAndTimestampMatchGuest(t *testing.T) {
	ctx := context.Background()
	g, n := twins(t, newEngine(t), "wordkey", wordkeyNative)
	var recs []abi.Record
	for _, v := range []string{`{"ts": 1700000000123}`, "  two words", "   ", "\u00a0word\u2003x", `{"ts": 1.5}`, `{"ts":"17"}`,
		`{"a":1}`, `[1]`, "bad", `{"ts": -5 }`, `{"ts": 99999999999999999999}`, `{"ts": 1e3}`, `{"x": {"ts": 1}, "ts": 2}`} {
		recs = append(recs, abi.Record{Value: []byte(v)})
	}
	recs = append(recs, abi.Record{})
	gk, err := g.Key(ctx, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	nk, err := n.Key(ctx, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "key", gk, nk)
	gt, err := g.Timestamp(ctx, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	nt, err := n.Timestamp(ctx, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "timestamp", gt, nt)
	if nt[0].Int != 1700000000123 || nt[9].Int != -5 || nt[12].Int != 2 || nt[4].Err == nil {
		t.Fatalf("timestamps %+v", nt)
	}
}

// TestNativeProcessState runs guests/go/counter's logic (without its
// counter) through ProcessState and SetState.
func TestNativeProcessState(t *testing.T) {
	ctx := context.Background()
	var buf []byte
	f := loadNative(t, newEngine(t), "counter", func() runtime.Native {
		return runtime.Native{ProcessState: func(st runtime.State, r *abi.Record, emit func(abi.Record)) error {
			if st == nil {
				return errors.New("no state")
			}
			v, ok, err := st.Get(r.Key)
			if err != nil {
				return err
			}
			var n uint64
			if ok {
				if n, err = strconv.ParseUint(string(v), 10, 64); err != nil {
					return fmt.Errorf("stored count %q: %w", v, err)
				}
			}
			buf = strconv.AppendUint(buf[:0], n+1, 10)
			if err := st.Put(r.Key, buf); err != nil {
				return err
			}
			out := *r
			out.Value = buf
			emit(out)
			return nil
		}}
	})
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := []abi.Record{{Key: []byte("a")}, {Key: []byte("b")}, {Key: []byte("a")}}
	var out runtime.Output
	if err := inst.Process(ctx, in, &out); err != nil || len(out.Failed) != 3 || out.Failed[0].Reason != "no state" {
		t.Fatalf("without state: %v %v", err, out.Failed)
	}
	st := mapState{"b": []byte("41")}
	inst.SetState(st)
	out.Reset()
	if err := inst.Process(ctx, in, &out); err != nil || len(out.Failed) != 0 {
		t.Fatal(err, out.Failed)
	}
	var got []string
	for _, r := range out.Records {
		got = append(got, string(r.Value))
	}
	if strings.Join(got, ",") != "1,42,2" || string(st["a"]) != "2" || string(st["b"]) != "42" {
		t.Fatalf("outputs %v, state %q", got, st)
	}
	f.Release(ctx, inst)
}

// codeErr is a native's own error type, found again through Error.Err.
type codeErr struct{ msg string }

func (e *codeErr) Error() string { return e.msg }

// failing answers according to the record's value (or the key/left value):
// "reject", "bad", "code77", "zero" (code 0), "wrapped" (a coded error
// wrapped), "own" (an error type of its own), "panic", "panicerr" (panics
// with an error); anything else succeeds.
var errPanicValue = errors.New("exploded")

func failure(v string) error {
	switch v {
	case "reject":
		return errors.New("rejected it")
	case "bad":
		return runtime.BadInput(errors.New("cannot decode"))
	case "code77":
		return &runtime.NativeError{Code: 77, Err: errors.New("unknown currency")}
	case "zero":
		return &runtime.NativeError{}
	case "wrapped":
		return fmt.Errorf("while parsing: %w", &runtime.NativeError{Code: abi.CodeBadInput, Err: errors.New("eof")})
	case "own":
		return &codeErr{"mine"}
	case "panic":
		panic("boom: " + v)
	case "panicerr":
		panic(fmt.Errorf("wrapped: %w", errPanicValue))
	}
	return nil
}

var failingValues = []string{"ok", "reject", "bad", "code77", "zero", "wrapped", "own", "panic", "panicerr", "ok2"}

// wantFailure is what each of failingValues gives (Cause, Code); "" for ok.
var wantFailure = map[string]struct {
	cause runtime.Cause
	code  abi.Code
}{
	"reject": {runtime.CauseGuest, abi.CodeRejected}, "bad": {runtime.CauseGuest, abi.CodeBadInput},
	"code77": {runtime.CauseGuest, 77}, "zero": {runtime.CauseGuest, abi.CodeRejected},
	"wrapped": {runtime.CauseGuest, abi.CodeBadInput}, "own": {runtime.CauseGuest, abi.CodeRejected},
	"panic": {runtime.CauseTrap, 0}, "panicerr": {runtime.CauseTrap, 0},
}

func failingNative() runtime.Native {
	return runtime.Native{
		Process: func(r *abi.Record, emit func(abi.Record)) error {
			emit(abi.Record{Value: []byte("before " + string(r.Value))}) // dropped if r fails
			if err := failure(string(r.Value)); err != nil {
				return err
			}
			emit(*r)
			return nil
		},
		AggInit: func() []byte { return []byte{0} },
		AggAdd: func(acc []byte, r *abi.Record) ([]byte, error) {
			acc[0]++ // in place, before failing: the runtime must not keep it
			if err := failure(string(r.Value)); err != nil {
				return nil, err
			}
			return append(acc, r.Value[0]), nil
		},
		AggMerge: func(_, a, b []byte) ([]byte, error) {
			if err := failure(string(a)); err != nil {
				return nil, err
			}
			if string(a) == "nil" {
				return nil, nil
			}
			return append(append([]byte{}, a...), b...), nil
		},
		AggResult: func(_, acc []byte) ([]byte, error) { return acc, failure(string(acc)) },
		Join:      func(_, l, _ []byte) ([]byte, error) { return l, failure(string(l)) },
		Key:       func(r *abi.Record) ([]byte, error) { return r.Value, failure(string(r.Value)) },
		Timestamp: func(r *abi.Record) (int64, error) { return int64(len(r.Value)), failure(string(r.Value)) },
	}
}

func checkFailure(t *testing.T, what string, e *runtime.Error, v string, kind abi.Kind, group, idx int) {
	t.Helper()
	want, fails := wantFailure[v]
	switch {
	case !fails && e != nil:
		t.Errorf("%s %q: unexpected failure %v", what, v, e)
	case !fails:
	case e == nil:
		t.Errorf("%s %q: did not fail", what, v)
	case e.Cause != want.cause || e.Code != want.code || e.Index != idx || e.Group != group || e.Kind != kind || e.Function != "failing":
		t.Errorf("%s %q: got %+v, want cause %s code %d group %d index %d", what, v, e, want.cause, want.code, group, idx)
	case e.Cause == runtime.CauseTrap && (!errors.Is(e, runtime.ErrTrap) || !runtime.IsCallFailure(e) || !strings.HasPrefix(e.Reason, "panic: ")):
		t.Errorf("%s %q: a panic is not reported as a trap: %v", what, v, e)
	case e.Cause == runtime.CauseGuest && (!errors.Is(e, runtime.ErrGuest) || runtime.IsCallFailure(e) || e.Reason == ""):
		t.Errorf("%s %q: %v", what, v, e)
	case v == "own" && !errors.As(e, new(*codeErr)), v == "panicerr" && !errors.Is(e, errPanicValue):
		t.Errorf("%s %q: the native's error is not in the chain: %v", what, v, e)
	}
}

func TestNativeErrorsAndPanics(t *testing.T) {
	ctx := context.Background()
	logs := &captured{}
	f := loadNative(t, newEngine(t), "failing", failingNative, runtime.WithLogger(slog.New(logs)))
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	var recs []abi.Record
	var vals [][]byte
	for _, v := range failingValues {
		recs = append(recs, abi.Record{Value: []byte(v), Timestamp: 7})
		vals = append(vals, []byte(v))
	}

	t.Run("process", func(t *testing.T) {
		var out runtime.Output
		if err := inst.Process(ctx, recs, &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, r := range out.Records {
			got = append(got, fmt.Sprintf("%d:%s", out.From[i], r.Value))
		}
		if want := "0:before ok,0:ok,9:before ok2,9:ok2"; strings.Join(got, ",") != want {
			t.Errorf("records %s, want %s", strings.Join(got, ","), want)
		}
		failed := map[int]*runtime.Error{}
		for _, e := range out.Failed {
			failed[e.Index] = e
		}
		if len(failed) != len(out.Failed) {
			t.Errorf("failures %v", out.Failed)
		}
		for i, v := range failingValues {
			checkFailure(t, "process", failed[i], v, abi.KindProcess, -1, i)
		}
		// Panics are logged with the native's stack.
		logged := logs.find("native function panicked")
		if len(logged) != 2 || !strings.Contains(logged[0], "boom: panic") || !strings.Contains(logged[0], "native_test.go") {
			t.Errorf("panic logs %q", logged)
		}
	})
	t.Run("key timestamp join result", func(t *testing.T) {
		keys, err := inst.Key(ctx, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := inst.Timestamp(ctx, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		joined, err := inst.Join(ctx, vals, vals, vals, nil)
		if err != nil {
			t.Fatal(err)
		}
		results, err := inst.AggResult(ctx, vals, vals, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range failingValues {
			checkFailure(t, "key", keys[i].Err, v, abi.KindKey, -1, i)
			checkFailure(t, "timestamp", ts[i].Err, v, abi.KindTimestamp, -1, i)
			checkFailure(t, "join", joined[i].Err, v, abi.KindJoin, -1, i)
			checkFailure(t, "result", results[i].Err, v, abi.KindAggregate, -1, i)
			if _, fails := wantFailure[v]; !fails {
				if string(keys[i].Bytes) != v || ts[i].Int != int64(len(v)) || string(joined[i].Bytes) != v || string(results[i].Bytes) != v {
					t.Errorf("%q: %+v %+v %+v %+v", v, keys[i], ts[i], joined[i], results[i])
				}
			} else if keys[i].Bytes != nil || joined[i].Bytes != nil || ts[i].Int != 0 {
				t.Errorf("%q: a failed item has an answer", v)
			}
		}
	})
	t.Run("merge", func(t *testing.T) {
		keys := append(vals, []byte("k"))
		as := append(vals, []byte("nil"))
		merged, err := inst.AggMerge(ctx, keys, as, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range failingValues {
			checkFailure(t, "merge", merged[i].Err, v, abi.KindAggregate, -1, i)
		}
		if e := merged[len(vals)].Err; e == nil || e.Cause != runtime.CauseMalformed || e.Index != len(vals) {
			t.Errorf("a nil merged accumulator: %+v", e)
		}
	})
	t.Run("add", func(t *testing.T) {
		groups := []abi.Group{{Key: []byte("g0"), Records: recs}, {Key: []byte("g1"), Acc: []byte{10}, Records: recs[:3]}}
		acc1 := groups[1].Acc
		added, failed, err := inst.AggAdd(ctx, groups, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if acc1[0] != 10 {
			t.Error("AggAdd changed the caller's accumulator")
		}
		// Only the successful records are folded: init [0], +1 and the
		// first byte of each.
		if got, want := added[0].Acc, []byte{2, 'o', 'o'}; !bytes.Equal(got, want) {
			t.Errorf("group 0 acc %v, want %v", got, want)
		}
		if got, want := added[1].Acc, []byte{11, 'o'}; !bytes.Equal(got, want) {
			t.Errorf("group 1 acc %v, want %v", got, want)
		}
		byPos := map[[2]int]*runtime.Error{}
		for _, e := range failed {
			byPos[[2]int{e.Group, e.Index}] = e
		}
		for i, v := range failingValues {
			checkFailure(t, "add", byPos[[2]int{0, i}], v, abi.KindAggregate, 0, i)
			if i < 3 {
				checkFailure(t, "add", byPos[[2]int{1, i}], v, abi.KindAggregate, 1, i)
			}
		}
		if len(byPos) != len(failed) || failed[0].Group != 0 || failed[len(failed)-1].Group != 1 {
			t.Errorf("failures out of order: %v", failed)
		}
	})
	t.Run("nil accumulator", func(t *testing.T) {
		f := loadNative(t, newEngine(t), "failing", func() runtime.Native {
			n := failingNative()
			n.AggAdd = func([]byte, *abi.Record) ([]byte, error) { return nil, nil }
			return n
		})
		inst, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		added, failed, err := inst.AggAdd(ctx, []abi.Group{{Acc: []byte{1}, Records: recs[:2]}}, nil, nil)
		if err != nil || len(failed) != 2 || failed[1].Cause != runtime.CauseMalformed || failed[1].Index != 1 || failed[1].Group != 0 ||
			!bytes.Equal(added[0].Acc, []byte{1}) {
			t.Fatalf("%v %v %v", added, failed, err)
		}
	})
}

// TestNativeInitPanics: a group without an accumulator cannot be folded when
// AggInit panics; its records fail, its accumulator stays empty; a group
// with one is folded.
func TestNativeInitPanics(t *testing.T) {
	ctx := context.Background()
	f := loadNative(t, newEngine(t), "failing", func() runtime.Native {
		n := failingNative()
		n.AggInit = func() []byte { panic("no init") }
		return n
	}, runtime.WithLogger(slog.New(&captured{})))
	inst, err := f.NewInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	if _, err := inst.AggInit(ctx); !errors.Is(err, runtime.ErrTrap) {
		t.Fatalf("AggInit: %v", err)
	}
	recs := []abi.Record{{Value: []byte("a")}, {Value: []byte("b")}}
	added, failed, err := inst.AggAdd(ctx, []abi.Group{{Records: recs}, {Acc: []byte{5}, Records: recs}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if added[0].Acc == nil || len(added[0].Acc) != 0 || !bytes.Equal(added[1].Acc, []byte{7, 'a', 'b'}) {
		t.Fatalf("added %v", added)
	}
	if len(failed) != 2 || failed[0].Index != 0 || failed[1].Index != 1 || failed[1].Group != 0 || failed[1].Cause != runtime.CauseTrap {
		t.Fatalf("failed %v", failed)
	}
}

// TestNativeOwnership: what natives return is copied, so a native reusing
// its buffers does not change answers already given, and callers may keep
// Results.
func TestNativeOwnership(t *testing.T) {
	ctx := context.Background()
	f := loadNative(t, newEngine(t), "joiner", joinerNative)
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	first, err := inst.Join(ctx, [][]byte{nil, nil}, [][]byte{[]byte("1"), []byte("2")}, [][]byte{nil, nil}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Join(ctx, [][]byte{nil}, [][]byte{[]byte("3333")}, [][]byte{nil}, nil); err != nil {
		t.Fatal(err)
	}
	if string(first[0].Bytes) != `{"left":1,"right":null}` || string(first[1].Bytes) != `{"left":2,"right":null}` {
		t.Fatalf("kept results changed: %q %q", first[0].Bytes, first[1].Bytes)
	}
	// Appending to one answer must not overwrite the next.
	_ = append(first[0].Bytes, 'x')
	if first[1].Bytes[0] != '{' {
		t.Fatal("answers share capacity")
	}

	u := loadNative(t, newEngine(t), "upper", upperNative)
	var out runtime.Output
	in := []abi.Record{{Key: []byte("k"), Value: []byte("abc")}, {Key: []byte("k"), Value: []byte("def")}}
	if err := u.Process(ctx, in, &out); err != nil {
		t.Fatal(err)
	}
	if err := u.Process(ctx, in[:1], &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Records[0].Value) != "ABC" || string(out.Records[1].Value) != "DEF" || string(in[0].Value) != "abc" {
		t.Fatalf("records %+v", out.Records)
	}
	_ = append(out.Records[0].Key, 'x')
	if string(out.Records[0].Value) != "ABC" {
		t.Fatal("key and value share capacity")
	}
}

func TestNativeFunction(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	made := 0
	f, err := e.LoadNativeFunc("wk", func() runtime.Native { made++; return wordkeyNative() }, runtime.WithPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	info := f.Info()
	want := runtime.Info{Name: "wk", Digest: "native:wordkey", ABIVersion: 1,
		Manifest: abi.Manifest{ABI: 1, Kinds: []abi.Kind{abi.KindKey, abi.KindTimestamp}, Name: "wordkey", Version: "1.0.0", SDK: runtime.NativeSDK},
		Exports:  []string{abi.ExportKey, abi.ExportTimestamp}}
	if fmt.Sprint(info) != fmt.Sprint(want) || f.Name() != "wk" || f.Digest() != "native:wordkey" || !f.IsNative() {
		t.Fatalf("info %+v\nwant %+v", info, want)
	}
	if f.Counters() != nil {
		t.Fatalf("counters %v", f.Counters())
	}
	// The pool holds the instance Load made; a second one is new.
	a, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Acquire(ctx)
	if err != nil || made != 2 || a == b {
		t.Fatalf("made %d %v", made, err)
	}
	if a.MemorySize() != 0 || a.Rebuilds() != 0 {
		t.Fatal("memory or rebuilds")
	}
	f.Release(ctx, a)
	f.Release(ctx, b) // pool full: closed
	if c, _ := f.Acquire(ctx); c != a {
		t.Fatal("pool did not keep the released instance")
	}
	if err := f.Process(ctx, nil, &runtime.Output{}); !errors.Is(err, runtime.ErrNoKind) {
		t.Fatalf("process on a key/timestamp native: %v", err)
	}
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Without a name, the manifest has the function's.
	g := loadNative(t, e, "anon", func() runtime.Native { return runtime.Native{Key: wordkeyNative().Key} })
	if m := g.Manifest(); m.Name != "anon" || g.Digest() != "native:anon" || len(m.Kinds) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	// Every instance must implement the same kinds.
	calls := 0
	h := loadNative(t, e, "fickle", func() runtime.Native {
		calls++
		if calls > 1 {
			return wordkeyNative()
		}
		return upperNative()
	})
	if _, err := h.NewInstance(ctx); !errors.Is(err, runtime.ErrManifest) {
		t.Fatalf("an instance with other kinds: %v", err)
	}
	if _, err := h.NewInstance(ctx); err == nil || !strings.Contains(err.Error(), "fickle") {
		t.Fatalf("an instance with other kinds: %v", err)
	}
}

func TestNativeMissingKinds(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	key := wordkeyNative().Key
	refused := []struct {
		name   string
		native runtime.Native
		want   error
	}{
		{"no kind", runtime.Native{Name: "x"}, runtime.ErrManifest},
		{"half an aggregate", runtime.Native{AggInit: func() []byte { return nil }, AggAdd: statsNative().AggAdd}, runtime.ErrMissingExport},
		{"two process functions", runtime.Native{Process: upperNative().Process,
			ProcessState: func(runtime.State, *abi.Record, func(abi.Record)) error { return nil }}, runtime.ErrManifest},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.LoadNative("n", tc.native); !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), "function n: ") {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := e.LoadNative("n", runtime.Native{Key: key}, runtime.WithPoolSize(-1)); err == nil {
		t.Fatal("a bad option was accepted")
	}

	f, err := e.LoadNative("keyonly", runtime.Native{Key: key}, runtime.WithPoolSize(0))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(ctx)
	inst, err := f.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release(ctx, inst)
	one := [][]byte{nil}
	recs := []abi.Record{{}}
	calls := map[string]func() error{
		"process":   func() error { return inst.Process(ctx, recs, &runtime.Output{}) },
		"init":      func() error { _, err := inst.AggInit(ctx); return err },
		"add":       func() error { _, _, err := inst.AggAdd(ctx, []abi.Group{{Records: recs}}, nil, nil); return err },
		"merge":     func() error { _, err := inst.AggMerge(ctx, one, one, one, nil); return err },
		"result":    func() error { _, err := inst.AggResult(ctx, one, one, nil); return err },
		"join":      func() error { _, err := inst.Join(ctx, one, one, one, nil); return err },
		"timestamp": func() error { _, err := inst.Timestamp(ctx, recs, nil); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, runtime.ErrNoKind) || !strings.Contains(err.Error(), "keyonly") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if res, err := inst.Key(ctx, []abi.Record{{Value: []byte("w")}}, nil); err != nil || string(res[0].Bytes) != "w" {
		t.Fatalf("key: %v %v", res, err)
	}
}

func TestNativeCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := loadNative(t, newEngine(t), "wordkey", wordkeyNative)
	inst, err := f.NewInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Key(ctx, []abi.Record{{}}, nil); !errors.Is(err, context.Canceled) || runtime.IsCallFailure(err) {
		t.Fatalf("key: %v", err)
	}
	u := loadNative(t, newEngine(t), "upper", upperNative)
	if err := u.Process(ctx, []abi.Record{{}}, &runtime.Output{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("process: %v", err)
	}
}

// TestNativeAllocations: with a reused Output, a native map allocates
// nothing per record through the runtime, and values calls one buffer per
// batch.
func TestNativeAllocations(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	u := loadNative(t, e, "upper", upperNative)
	inst, err := u.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	batch := benchBatch(256)
	var out runtime.Output
	if n := testing.AllocsPerRun(20, func() {
		out.Reset()
		if err := inst.Process(ctx, batch, &out); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Errorf("Process: %.1f allocations per batch of %d", n, len(batch))
	}
	w := loadNative(t, e, "wordkey", wordkeyNative)
	winst, err := w.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := make([]runtime.Result, 0, len(batch))
	// The key's bytes.Fields allocates one slice per record; the runtime
	// adds one buffer per batch.
	if n := testing.AllocsPerRun(20, func() {
		if _, err := winst.Key(ctx, batch, res[:0]); err != nil {
			t.Fatal(err)
		}
	}); n > float64(len(batch)+1) {
		t.Errorf("Key: %.1f allocations per batch of %d", n, len(batch))
	}
}
