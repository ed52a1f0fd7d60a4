// Package eddytest drives an Eddy guest natively, through the same envelopes
// the host sends, so that a guest's handlers, error codes and panics can be
// tested with plain go test, without compiling to Wasm or running a host.
//
// Import it from a guest's _test.go files. The guest's init has already
// registered its handlers when the tests run:
//
//	func TestUpper(t *testing.T) {
//		res, err := eddytest.Process(eddy.Record{Key: []byte("k"), Value: []byte("hi")})
//		if err != nil {
//			t.Fatal(err)
//		}
//		if got := string(res[0].Records[0].Value); got != "HI" {
//			t.Fatalf("got %q", got)
//		}
//	}
//
// Keyed state, counters and the log are in-memory stand-ins for the host's
// (State, SetStateMode, Counter, SetLogOutput). The SDK is single-threaded,
// like a Wasm instance: tests that use this package must not run in parallel.
//
// The package works only in native builds (not GOOS=wasip1), where the SDK
// uses these stand-ins.
package eddytest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
	"github.com/eddy-streams/eddy/sdk/go/internal/native"
)

// Error codes of ABI.md section 7, for comparing with Result.Code.
const (
	OK          = 0
	Rejected    = 1
	BadInput    = 2
	Panic       = 3
	Unsupported = 4
	BadEnvelope = 5
	StateError  = 6
)

// Result is the answer for one input item.
type Result struct {
	// Code is 0 on success, else the failure code (ABI.md section 7).
	Code int
	// Reason is the failure reason when Code is not 0.
	Reason string
	// Records are the output records of Process (copies). A nil output
	// timestamp is replaced by the input's, as the host does.
	Records []eddy.Record
	// Value is the body of Key, Join, AggInit, AggMerge and AggResult (a
	// copy); nil is a null key, or "emit nothing".
	Value []byte
	// Time is the body of Timestamp.
	Time int64
}

// Manifest is the decoded answer of eddy_manifest.
type Manifest struct {
	ABI           int
	Kinds         []string
	Name, Version string
	SDK           string
}

// CallError is a failure of a whole call: the export returned a negative
// value after reporting Reason through the error host function.
type CallError struct {
	Export string
	Code   int
	Reason string
}

// Error implements error.
func (e *CallError) Error() string {
	return fmt.Sprintf("%s failed with code %d: %s", e.Export, e.Code, e.Reason)
}

// Call runs the export called export (for example "eddy_process") on a raw
// input envelope and returns a copy of the output envelope. A call-level
// failure is returned as a *CallError.
func Call(export string, envelope []byte) ([]byte, error) {
	if native.Call == nil {
		return nil, errors.New("eddytest: the SDK is not linked natively")
	}
	out, code := native.Call(export, envelope)
	if code != 0 {
		_, reason := native.LastError()
		return nil, &CallError{Export: export, Code: int(code), Reason: reason}
	}
	return append([]byte{}, out...), nil
}

// Process runs eddy_process on a batch of records.
func Process(recs ...eddy.Record) ([]Result, error) {
	out, err := Call("eddy_process", appendRecords(nil, recs))
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(recs), func(r *msgpack.Reader, i int, res *Result) {
		n := r.ArrayLen()
		for j := 0; j < n && r.Err() == nil; j++ {
			res.Records = append(res.Records, readRecord(r, recs[i].Timestamp))
		}
	})
}

// Key runs eddy_key on a batch of records; Result.Value is the new key.
func Key(recs ...eddy.Record) ([]Result, error) {
	out, err := Call("eddy_key", appendRecords(nil, recs))
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(recs), readValue)
}

// Timestamp runs eddy_timestamp on a batch of records; Result.Time is the
// event time.
func Timestamp(recs ...eddy.Record) ([]Result, error) {
	out, err := Call("eddy_timestamp", appendRecords(nil, recs))
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(recs), func(r *msgpack.Reader, _ int, res *Result) {
		res.Time = r.Int()
	})
}

// JoinItem is one input of Join; a nil Left or Right is a missing side.
type JoinItem struct{ Key, Left, Right []byte }

// Join runs eddy_join; Result.Value is the joined value.
func Join(items ...JoinItem) ([]Result, error) {
	b := msgpack.AppendArrayHeader(nil, len(items))
	for _, it := range items {
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, it.Key)
		b = msgpack.AppendBin(b, it.Left)
		b = msgpack.AppendBin(b, it.Right)
	}
	out, err := Call("eddy_join", b)
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(items), readValue)
}

// AggInit runs eddy_agg_init; Result.Value is the initial accumulator.
func AggInit() (Result, error) {
	out, err := Call("eddy_agg_init", nil)
	if err != nil {
		return Result{}, err
	}
	var r msgpack.Reader
	r.Reset(out)
	res := readResult(&r, 0, readValue)
	if err := check(&r); err != nil {
		return Result{}, err
	}
	return res, nil
}

// Group is one input group of AggAdd. A nil Acc starts from the initial
// accumulator.
type Group struct {
	Key, Acc []byte
	Records  []eddy.Record
}

// Added is the answer of AggAdd for one group.
type Added struct {
	// Acc is the accumulator after all records that were folded.
	Acc []byte
	// Errors are the records that were not folded.
	Errors []RecordError
}

// RecordError is a record of a group that was not folded.
type RecordError struct {
	Index  int // within its group
	Code   int
	Reason string
}

// AggAdd runs eddy_agg_add on groups.
func AggAdd(groups ...Group) ([]Added, error) {
	b := msgpack.AppendArrayHeader(nil, len(groups))
	for _, g := range groups {
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, g.Key)
		b = msgpack.AppendBin(b, g.Acc)
		b = appendRecords(b, g.Records)
	}
	out, err := Call("eddy_agg_add", b)
	if err != nil {
		return nil, err
	}
	var r msgpack.Reader
	r.Reset(out)
	if n := r.ArrayLen(); n != len(groups) && r.Err() == nil {
		return nil, fmt.Errorf("eddytest: %d answers for %d groups", n, len(groups))
	}
	added := make([]Added, len(groups))
	for i := range added {
		if r.ArrayLen() != 2 {
			r.Fail(errors.New("Added is not an array of 2"))
		}
		acc := r.Bytes()
		if acc == nil && r.Err() == nil {
			r.Fail(errors.New("accumulator is nil"))
		}
		added[i].Acc = append([]byte{}, acc...)
		e := r.ArrayLen()
		for j := 0; j < e && r.Err() == nil; j++ {
			if r.ArrayLen() != 3 {
				r.Fail(errors.New("RecordError is not an array of 3"))
			}
			added[i].Errors = append(added[i].Errors, RecordError{
				Index: int(r.Int()), Code: int(r.Int()), Reason: string(r.Str()),
			})
		}
	}
	if err := check(&r); err != nil {
		return nil, err
	}
	return added, nil
}

// MergeItem is one input of AggMerge.
type MergeItem struct{ Key, A, B []byte }

// AggMerge runs eddy_agg_merge; Result.Value is the merged accumulator.
func AggMerge(items ...MergeItem) ([]Result, error) {
	b := msgpack.AppendArrayHeader(nil, len(items))
	for _, it := range items {
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, it.Key)
		b = msgpack.AppendBin(b, it.A)
		b = msgpack.AppendBin(b, it.B)
	}
	out, err := Call("eddy_agg_merge", b)
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(items), readValue)
}

// ResultItem is one input of AggResult.
type ResultItem struct{ Key, Acc []byte }

// AggResult runs eddy_agg_result; Result.Value is the output value (nil:
// emit nothing).
func AggResult(items ...ResultItem) ([]Result, error) {
	b := msgpack.AppendArrayHeader(nil, len(items))
	for _, it := range items {
		b = append(b, 0x92)
		b = msgpack.AppendBin(b, it.Key)
		b = msgpack.AppendBin(b, it.Acc)
	}
	out, err := Call("eddy_agg_result", b)
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(items), readValue)
}

// ReadManifest runs eddy_manifest and decodes the answer.
func ReadManifest() (Manifest, error) {
	var m Manifest
	out, err := Call("eddy_manifest", nil)
	if err != nil {
		return m, err
	}
	var r msgpack.Reader
	r.Reset(out)
	n := r.MapLen()
	for i := 0; i < n && r.Err() == nil; i++ {
		switch string(r.Str()) {
		case "abi":
			m.ABI = int(r.Int())
		case "kinds":
			k := r.ArrayLen()
			for j := 0; j < k && r.Err() == nil; j++ {
				m.Kinds = append(m.Kinds, string(r.Str()))
			}
		case "name":
			m.Name = string(r.Str())
		case "version":
			m.Version = string(r.Str())
		case "sdk":
			m.SDK = string(r.Str())
		default:
			r.Skip()
		}
	}
	return m, check(&r)
}

// State returns a copy of the keyed-state value stored under key.
func State(key []byte) ([]byte, bool) { return native.State(key) }

// SetState stores value under key, as a guest's StatePut would.
func SetState(key, value []byte) {
	if native.StatePut(key, value) != 0 {
		panic("eddytest: SetState while the state store is not available")
	}
}

// StateMode is how the stand-in state store answers.
type StateMode = native.StateMode

// State modes for SetStateMode.
const (
	// StateOK is a working store (the default).
	StateOK = native.StateOK
	// StateNone is a step without a store: the SDK returns eddy.ErrNoState.
	StateNone = native.StateNone
	// StateFailing is a failing store: the SDK returns eddy.ErrStateFailed.
	StateFailing = native.StateFailing
)

// SetStateMode sets how the state store answers.
func SetStateMode(m StateMode) { native.SetStateMode(m) }

// Counter returns the value of the counter called name.
func Counter(name string) int64 { return native.Counters()[name] }

// Counters returns a copy of all counters.
func Counters() map[string]int64 { return native.Counters() }

// SetLogOutput sends the guest's log lines to w (nil: standard error) and
// returns the previous writer.
func SetLogOutput(w io.Writer) io.Writer { return native.SetLog(w) }

// Reset empties the state store, makes it available, zeroes the counters
// and forgets the timers.
func Reset() {
	native.ResetState()
	native.ResetCounters()
	native.ResetTimers()
	native.SetConfig(nil)
}

// SetConfig sets the entries eddy.Config reads (nil: none); Reset clears
// them.
func SetConfig(c map[string]string) { native.SetConfig(c) }

// Timer is a timer the guest set (SetTimers lists them).
type Timer struct {
	Key    []byte
	Domain eddy.TimeDomain
	Time   int64
}

// Timers returns the timers the guest has set and not deleted, in time
// order (then domain, then key).
func Timers() []Timer {
	var ts []Timer
	for _, k := range native.Timers() {
		ts = append(ts, Timer{Key: []byte(k.Key), Domain: eddy.TimeDomain(k.Domain), Time: k.Time})
	}
	slices.SortFunc(ts, func(a, b Timer) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Domain, b.Domain), bytes.Compare(a.Key, b.Key))
	})
	return ts
}

// SetCurrentTime sets what eddy.CurrentTime answers for domain d.
func SetCurrentTime(d eddy.TimeDomain, now int64) { native.SetTimeNow(int32(d), now) }

// FireTimers runs eddy_timer on timers, as the host does when they fire
// (it does not delete them from Timers: the host deletes a timer when it
// fires, a test may do it with Reset or by calling the guest). A record's
// nil timestamp becomes its timer's time.
func FireTimers(ts ...Timer) ([]Result, error) {
	b := msgpack.AppendArrayHeader(nil, len(ts))
	for _, t := range ts {
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, t.Key)
		b = msgpack.AppendInt(b, t.Time)
		b = msgpack.AppendInt(b, int64(t.Domain))
	}
	out, err := Call("eddy_timer", b)
	if err != nil {
		return nil, err
	}
	return decodeResults(out, len(ts), func(r *msgpack.Reader, i int, res *Result) {
		n := r.ArrayLen()
		for j := 0; j < n && r.Err() == nil; j++ {
			res.Records = append(res.Records, readRecord(r, ts[i].Time))
		}
	})
}

func appendRecords(b []byte, recs []eddy.Record) []byte {
	b = msgpack.AppendArrayHeader(b, len(recs))
	for i := range recs {
		rec := &recs[i]
		b = append(b, 0x94)
		b = msgpack.AppendBin(b, rec.Key)
		b = msgpack.AppendBin(b, rec.Value)
		b = msgpack.AppendInt(b, rec.Timestamp)
		b = msgpack.AppendArrayHeader(b, len(rec.Headers))
		for _, h := range rec.Headers {
			b = append(b, 0x92)
			b = msgpack.AppendStr(b, h.Key)
			b = msgpack.AppendBin(b, h.Value)
		}
	}
	return b
}

func readRecord(r *msgpack.Reader, inherit int64) eddy.Record {
	if r.ArrayLen() != 4 {
		r.Fail(errors.New("record is not an array of 4"))
	}
	rec := eddy.Record{Key: r.Bytes(), Value: r.Bytes(), Timestamp: inherit}
	if r.IsNil() {
		r.Nil()
	} else {
		rec.Timestamp = r.Int()
	}
	if r.IsNil() {
		r.Nil()
	} else {
		n := r.ArrayLen()
		for j := 0; j < n && r.Err() == nil; j++ {
			if r.ArrayLen() != 2 {
				r.Fail(errors.New("header is not an array of 2"))
			}
			rec.Headers = append(rec.Headers, eddy.Header{Key: string(r.Str()), Value: r.Bytes()})
		}
	}
	return rec.Clone()
}

func readValue(r *msgpack.Reader, _ int, res *Result) {
	if v := r.Bytes(); v != nil {
		res.Value = append([]byte{}, v...)
	}
}

func readResult(r *msgpack.Reader, i int, body func(*msgpack.Reader, int, *Result)) Result {
	var res Result
	if r.ArrayLen() != 2 {
		r.Fail(errors.New("result is not an array of 2"))
	}
	res.Code = int(r.Int())
	if res.Code != 0 {
		res.Reason = string(r.Str())
	} else {
		body(r, i, &res)
	}
	return res
}

func decodeResults(out []byte, n int, body func(*msgpack.Reader, int, *Result)) ([]Result, error) {
	var r msgpack.Reader
	r.Reset(out)
	if m := r.ArrayLen(); m != n && r.Err() == nil {
		return nil, fmt.Errorf("eddytest: %d results for %d inputs", m, n)
	}
	res := make([]Result, n)
	for i := range res {
		res[i] = readResult(&r, i, body)
	}
	if err := check(&r); err != nil {
		return nil, err
	}
	return res, nil
}

func check(r *msgpack.Reader) error {
	if err := r.Err(); err != nil {
		return fmt.Errorf("eddytest: malformed output: %w", err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("eddytest: malformed output: %d trailing bytes", r.Len())
	}
	return nil
}
