package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// refCase checks one exact behaviour of a reference function.
type refCase struct {
	name string
	run  func(s *suite, inst *runtime.Instance) (string, error)
}

// references are the exact behaviours of the reference functions that every
// language implements in guests/<lang>/, keyed by manifest name.
var references = map[string][]refCase{
	"passthrough": {{"identity", expectProcess([]abi.Record{
		{Key: []byte("k"), Value: []byte("v"), Timestamp: 9, Headers: []abi.Header{{Key: "h", Value: []byte("x")}}},
		{Timestamp: 1},
	}, []string{`k="k" v="v" t=9 h["h"]="x";`, `k=nil v=nil t=1;`})}},
	"upper": {{"upper-cases", expectProcess([]abi.Record{
		{Key: []byte("Key"), Value: []byte("hello wörld àþ"), Timestamp: 5},
		{Key: []byte("n"), Value: nil, Timestamp: 6},
		{Value: []byte("ÿ ß 123 \xff")},
	}, []string{`k="Key" v="HELLO WÖRLD ÀÞ" t=5;`, `k="n" v=nil t=6;`, `k=nil v="Ÿ ß 123 \xff" t=0;`})}},
	"filter": {{"keeps-amount-over-100", expectProcess(values(
		`{"amount":100}`, `{"amount":99.9}`, `{"amount":"x"}`, `[1]`, `not json`, `{"x":{"amount":500},"amount":1e3}`, `{"note":"amount","amount":5}`,
	), []string{`k=nil v="{\"amount\":100}" t=0;`, "", "", "error 2", "error 2", `k=nil v="{\"x\":{\"amount\":500},\"amount\":1e3}" t=0;`, ""})}},
	"split": {{"splits-words", expectProcess([]abi.Record{
		{Key: []byte("k"), Value: []byte(" a  b\tc\u00a0d "), Timestamp: 3},
		{Key: []byte("e"), Value: []byte(""), Timestamp: 4},
	}, []string{`k="k" v="a" t=3;k="k" v="b" t=3;k="k" v="c" t=3;k="k" v="d" t=3;`, ""})}},
	// route names outputs of its step by the header abi.HeaderOutput
	// (ABI.md, "Named outputs"): "objects" for a value starting with '{',
	// "numbers" for one starting with a digit, none otherwise.
	"route": {{"names-outputs", expectProcess([]abi.Record{
		{Key: []byte("k"), Value: []byte(`{"a":1}`), Timestamp: 1, Headers: []abi.Header{{Key: "h", Value: []byte("x")}}},
		{Value: []byte("42 apples"), Timestamp: 2},
		{Value: []byte("word"), Timestamp: 3, Headers: []abi.Header{{Key: "h", Value: nil}}},
		{Key: []byte("n"), Value: nil, Timestamp: 4},
		{Value: []byte{}, Timestamp: 5},
		{Value: []byte("{"), Timestamp: 6},
	}, []string{
		`k="k" v="{\"a\":1}" t=1 h["h"]="x" h["eddy.output"]="objects";`,
		`k=nil v="42 apples" t=2 h["eddy.output"]="numbers";`,
		`k=nil v="word" t=3 h["h"]=nil;`,
		`k="n" v=nil t=4;`,
		`k=nil v="" t=5;`,
		`k=nil v="{" t=6 h["eddy.output"]="objects";`,
	})}},
	"poison": {
		{"error-codes", expectProcess(values("ok", "poison", "code77"), []string{`k=nil v="OK" t=0;`, "error 1", "error 77"})},
		{"crash-is-isolated", expectCrashIsolated},
	},
	"stats": {{"count-sum-avg", expectStats}},
	// pricestats is a Go-only test fixture (joins, windows over JSON, and
	// Nexmark), not one of the ten functions every SDK implements.
	"pricestats": {{"count-sum-max-of-price", expectPriceStats}},
	"counter":    {{"keyed-state-counters-and-logging", expectCounter}},
	"joiner":     {{"nests-both-sides", expectJoin}},
	"wordkey":    {{"key-and-timestamp", expectWordkey}},
	"timeout":    {{"event-time-timers", expectTimeout}},
	"prefix":     {{"config-entry", expectPrefix}},
	// dedupe and remind are Go-only fixtures of timers (examples, node
	// tests), not reference functions of every SDK.
	"dedupe": {{"forgets-after-a-minute", expectDedupe}},
	"remind": {{"processing-time-timers", expectRemind}},
}

func values(vs ...string) []abi.Record {
	recs := make([]abi.Record, len(vs))
	for i, v := range vs {
		recs[i] = abi.Record{Value: []byte(v)}
	}
	return recs
}

func expectProcess(in []abi.Record, want []string) func(*suite, *runtime.Instance) (string, error) {
	return func(s *suite, inst *runtime.Instance) (string, error) {
		for _, size := range []int{len(in), 1} {
			got, err := processOutcome(s, inst, in, size)
			if err != nil {
				return "", err
			}
			if err := sameOutcome(fmt.Sprintf("batches of %d", size), "got", got, "want", want); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%d records give the expected outputs and codes", len(in)), nil
	}
}

func expectCrashIsolated(s *suite, inst *runtime.Instance) (string, error) {
	in := values("a", "panic", "b")
	var out runtime.Output
	if err := inst.Process(s.ctx, in, &out); err != nil {
		return "", err
	}
	if len(out.Records) != 2 || string(out.Records[0].Value) != "A" || string(out.Records[1].Value) != "B" {
		return "", errorf("the records around the crash were not processed: got %d outputs, want 2", len(out.Records))
	}
	if len(out.Failed) != 1 || out.Failed[0].Index != 1 {
		return "", errorf("failures: got %v, want record 1 only", out.Failed)
	}
	e := out.Failed[0]
	if e.Code != abi.CodePanic && e.Cause != runtime.CauseTrap {
		return "", errorf("the crash: got %v, want PANIC (code 3) or a trap", e)
	}
	return "the crash is reported as " + e.CodeString() + " and isolated", nil
}

func expectStats(s *suite, inst *runtime.Instance) (string, error) {
	key := []byte("k")
	acc, failed, err := fold(s, inst, key, nil, values("1", "2", "x", "3.5", "-0.5"), 5)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{2}) {
		return "", errorf("failed records: got %v, want [2] (not a number)", failed)
	}
	r, err := s.result(inst, key, acc)
	if err != nil {
		return "", err
	}
	if want := `"{\"count\":4,\"sum\":6,\"avg\":1.5}"`; r != want {
		return "", errorf("result: got %s, want %s", r, want)
	}
	return "count, sum and average of 4 numbers; a non-number is refused with BAD_INPUT", nil
}

func expectPriceStats(s *suite, inst *runtime.Instance) (string, error) {
	key := []byte("k")
	acc, failed, err := fold(s, inst, key, nil, values(`{"price":3}`, `{"price":"x"}`, `42`, `{"id":1,"price":10.5}`, `{"price":-1}`), 5)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{1, 2}) {
		return "", errorf("failed records: got %v, want [1 2] (no numeric price)", failed)
	}
	r, err := s.result(inst, key, acc)
	if err != nil {
		return "", err
	}
	if want := `"{\"count\":3,\"sum\":12.5,\"max\":10.5}"`; r != want {
		return "", errorf("result: got %s, want %s", r, want)
	}
	return "count, sum and maximum of the price member of 3 objects; others are refused with BAD_INPUT", nil
}

func expectCounter(s *suite, inst *runtime.Instance) (string, error) {
	before := s.fn.Counters()["records"]
	st := mapState{"b": []byte("41")}
	inst.SetState(st)
	got, err := processOutcome(s, inst, []abi.Record{{Key: []byte("a")}, {Key: []byte("b")}, {Key: []byte("a")}}, 3)
	if err != nil {
		return "", err
	}
	want := outcome{`k="a" v="1" t=0;`, `k="b" v="42" t=0;`, `k="a" v="2" t=0;`}
	if err := sameOutcome("counts", "got", got, "want", want); err != nil {
		return "", err
	}
	if string(st["a"]) != "2" || string(st["b"]) != "42" {
		return "", errorf("state after the batch: got %q, want a=\"2\" b=\"42\"", st)
	}
	if n := s.fn.Counters()["records"] - before; n != 3 {
		return "", errorf("counter \"records\" grew by: got %d, want 3", n)
	}
	// 1000 more records: the function logs once per 1000 records it counted.
	recs := make([]abi.Record, 997)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte("c")}
	}
	if _, err := processOutcome(s, inst, recs, 100); err != nil {
		return "", err
	}
	logs := s.logs.guestLines()
	if len(logs) != 1 || !strings.Contains(logs[0].text, "1000") {
		return "", errorf("guest log lines after 1000 records: got %+v, want one mentioning 1000", logs)
	}
	// Without a store the function refuses records, with REJECTED or STATE.
	inst.SetState(nil)
	got, err = processOutcome(s, inst, []abi.Record{{Key: []byte("a")}}, 1)
	if err != nil {
		return "", err
	}
	if got[0] != "error 1" && got[0] != "error 6" {
		return "", errorf("without a store: got %s, want error 1 or 6", got[0])
	}
	return "per-key counts in state, the records counter, a log line per 1000 records, refusal without a store", nil
}

func expectJoin(s *suite, inst *runtime.Instance) (string, error) {
	res, err := inst.Join(s.ctx, [][]byte{[]byte("k"), nil, []byte("x")},
		[][]byte{[]byte(`{"a":1}`), nil, []byte(`[1]`)}, [][]byte{nil, []byte(`"r"`), []byte(`2`)}, nil)
	if err != nil {
		return "", err
	}
	want := []string{`{"left":{"a":1},"right":null}`, `{"left":null,"right":"r"}`, `{"left":[1],"right":2}`}
	for i, r := range res {
		if r.Err != nil || string(r.Bytes) != want[i] {
			return "", errorf("pair %d: got %q (error %v), want %s", i, r.Bytes, r.Err, want[i])
		}
	}
	return "left-only, right-only and both-sided pairs", nil
}

func expectWordkey(s *suite, inst *runtime.Instance) (string, error) {
	recs := values("  two words", `{"ts": 1700000000123}`, `{"x": 1}`)
	keys, err := inst.Key(s.ctx, recs, nil)
	if err != nil {
		return "", err
	}
	if string(keys[0].Bytes) != "two" || string(keys[1].Bytes) != `{"ts":` {
		return "", errorf("keys: got %q, %q, want %q, %q", keys[0].Bytes, keys[1].Bytes, "two", `{"ts":`)
	}
	ts, err := inst.Timestamp(s.ctx, recs, nil)
	if err != nil {
		return "", err
	}
	if ts[1].Err != nil || ts[1].Int != 1700000000123 || ts[2].Err == nil || ts[2].Err.Code != abi.CodeBadInput {
		return "", errorf("timestamps: got %+v, %+v, want 1700000000123 and BAD_INPUT (code 2)", ts[1], ts[2])
	}
	return "first word as key; ts field as event time; BAD_INPUT without one", nil
}
