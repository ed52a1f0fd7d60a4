package conformance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// sampleRecords returns n varied, deterministic records: sentences, JSON
// objects with an amount, bare numbers and short words.
func sampleRecords(n int) []abi.Record {
	words := []string{"alpha", "beta", "gamma", "delta", "épée", "ζήτα", "东京", "emoji 🦀"}
	recs := make([]abi.Record, n)
	for i := range recs {
		var v string
		switch i % 4 {
		case 0:
			v = words[i%len(words)] + " and " + words[(i/3)%len(words)]
		case 1:
			v = fmt.Sprintf(`{"id":%d,"amount":%d,"ts":%d}`, i, (i*37)%300, 1700000000000+int64(i))
		case 2:
			v = strconv.Itoa(i % 97)
		default:
			v = words[i%len(words)]
		}
		recs[i] = abi.Record{Key: []byte("k-" + strconv.Itoa(i%13)), Value: []byte(v), Timestamp: 1700000000000 + int64(i)}
	}
	return recs
}

// edgeRecords are the awkward records every function must survive.
func edgeRecords() []abi.Record {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	var hs []abi.Header
	for i := 0; i < 20; i++ {
		hs = append(hs, abi.Header{Key: "h-" + strconv.Itoa(i) + "-ключ", Value: []byte("v" + strconv.Itoa(i))})
	}
	hs = append(hs, abi.Header{Key: "", Value: nil}, abi.Header{Key: "nil", Value: nil})
	return []abi.Record{
		{Key: nil, Value: nil, Timestamp: 0},
		{Key: []byte{}, Value: []byte{}, Timestamp: 1},
		{Key: []byte("bin"), Value: all, Timestamp: 2},
		{Key: []byte{0xff, 0x00}, Value: []byte("\xff\xfe not utf-8 \xc3"), Timestamp: 3},
		{Key: []byte("uni"), Value: []byte("Ünïcödé ✓ 𝄞 مرحبا שלום e\u0301"), Timestamp: 4},
		{Key: []byte("hdr"), Value: []byte("with headers"), Timestamp: 5, Headers: hs},
		{Key: []byte("neg"), Value: []byte("{}"), Timestamp: -1},
		{Key: []byte("max"), Value: []byte("[]"), Timestamp: 1<<63 - 1},
		{Key: []byte("ws"), Value: []byte(" \t\n "), Timestamp: 6},
		{Key: []byte("json"), Value: []byte(`{"amount":1e308,"nested":{"a":[1,2,{"b":null}]},"s":"\"\\u00e9"}`), Timestamp: 7},
	}
}

// outcome is what happened to each input record, as comparable text.
type outcome []string

// processOutcome runs recs through the instance in batches of size and
// describes each input's outputs or failure. A call-level failure (trap,
// timeout, ...) of any record is returned as an error.
func processOutcome(s *suite, inst *runtime.Instance, recs []abi.Record, size int) (outcome, error) {
	return callOutcome(len(recs), size, func(lo, hi int, out *runtime.Output) error { return inst.Process(s.ctx, recs[lo:hi], out) },
		func(i int) string { return fmt.Sprintf("record %d (%s)", i, preview(recs[i].Value)) })
}

// callOutcome makes the calls of n items in batches of size (call runs
// items [lo, hi) into out) and describes each item's outputs or failure;
// a call-level failure of an item (named by what) is returned as an error.
func callOutcome(n, size int, call func(lo, hi int, out *runtime.Output) error, what func(i int) string) (outcome, error) {
	res := make(outcome, n)
	var out runtime.Output
	for lo := 0; lo < n || lo == 0; lo += max(size, 1) {
		hi := min(lo+size, n)
		out.Reset()
		if err := call(lo, hi, &out); err != nil {
			return nil, err
		}
		for j, r := range out.Records {
			res[lo+int(out.From[j])] += describe(&r) + ";"
		}
		for _, e := range out.Failed {
			if runtime.IsCallFailure(e) {
				return nil, fmt.Errorf("%s: %w", what(lo+e.Index), e)
			}
			res[lo+e.Index] = "error " + strconv.Itoa(int(e.Code))
		}
		if size == 0 {
			if len(out.Records) != 0 || len(out.Failed) != 0 {
				return nil, errorf("empty batch: got %d records and %d failures, want none", len(out.Records), len(out.Failed))
			}
			break
		}
	}
	return res, nil
}

func describe(r *abi.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "k=%s v=%s t=%d", q(r.Key), q(r.Value), r.Timestamp)
	for _, h := range r.Headers {
		fmt.Fprintf(&b, " h[%q]=%s", h.Key, q(h.Value))
	}
	return b.String()
}

func q(b []byte) string {
	if b == nil {
		return "nil"
	}
	return strconv.Quote(string(b))
}

func preview(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q… (%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// sameOutcome compares two runs record by record; la and lb label them in
// the failure ("got" and "want" when b is what is expected).
func sameOutcome(what, la string, a outcome, lb string, b outcome) error {
	for i := range a {
		if a[i] != b[i] {
			return errorf("%s: record %d differs:\n  %s: %s\n  %s: %s", what, i, la, a[i], lb, b[i])
		}
	}
	return nil
}

func (s *suite) processBatchSizes(inst *runtime.Instance) (string, error) {
	if _, err := processOutcome(s, inst, nil, 0); err != nil {
		return "", fmt.Errorf("batch of 0: %w", err)
	}
	recs := sampleRecords(1000)
	whole, err := processOutcome(s, inst, recs, len(recs))
	if err != nil {
		return "", fmt.Errorf("batch of 1000: %w", err)
	}
	ones, err := processOutcome(s, inst, recs, 1)
	if err != nil {
		return "", fmt.Errorf("batches of 1: %w", err)
	}
	sevens, err := processOutcome(s, inst, recs, 7)
	if err != nil {
		return "", fmt.Errorf("batches of 7: %w", err)
	}
	if err := sameOutcome("batch of 1000 vs batches of 1", "batch of 1000", whole, "batches of 1", ones); err != nil {
		return "", err
	}
	if err := sameOutcome("batch of 1000 vs batches of 7", "batch of 1000", whole, "batches of 7", sevens); err != nil {
		return "", err
	}
	return "batches of 0, 1, 7 and 1000 agree on 1000 records", nil
}

func (s *suite) processEdges(inst *runtime.Instance) (string, error) {
	recs := edgeRecords()
	whole, err := processOutcome(s, inst, recs, len(recs))
	if err != nil {
		return "", err
	}
	ones, err := processOutcome(s, inst, recs, 1)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("edge records together vs one by one", "together", whole, "one by one", ones); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d edge records (null, empty, binary, invalid UTF-8, unicode, 22 headers, extreme timestamps)", len(recs)), nil
}

func (s *suite) processLarge(inst *runtime.Instance) (string, error) {
	mk := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	recs := []abi.Record{
		{Key: []byte("1MiB"), Value: mk(1<<20, 'a'), Timestamp: 1},
		{Key: []byte("4MiB"), Value: mk(4<<20, 'b'), Timestamp: 2},
		{Key: []byte("1MiB+1"), Value: mk(1<<20+1, 'c'), Timestamp: 3},
		{Key: mk(64<<10, 'k'), Value: []byte("64 KiB key"), Timestamp: 4},
	}
	if _, err := processOutcome(s, inst, recs, len(recs)); err != nil {
		return "", err
	}
	if _, err := processOutcome(s, inst, recs, 1); err != nil {
		return "", err
	}
	return "values of 1 MiB, 1 MiB+1 and 4 MiB and a 64 KiB key, together and alone", nil
}

// mapState is the keyed store given to functions in the state cases.
type mapState map[string][]byte

func (m mapState) Get(k []byte) ([]byte, bool, error) { v, ok := m[string(k)]; return v, ok, nil }
func (m mapState) Put(k, v []byte) error              { m[string(k)] = bytes.Clone(v); return nil }
func (m mapState) Delete(k []byte) error              { delete(m, string(k)); return nil }

func (s *suite) processState(inst *runtime.Instance) (string, error) {
	recs := append(sampleRecords(50), edgeRecords()...)
	if _, err := processOutcome(s, inst, recs, 16); err != nil {
		return "", fmt.Errorf("without state: %w", err)
	}
	st := mapState{}
	inst.SetState(st)
	if _, err := processOutcome(s, inst, recs, 16); err != nil {
		return "", fmt.Errorf("with state: %w", err)
	}
	return fmt.Sprintf("runs without a store and with one (%d keys written)", len(st)), nil
}

// memoryBound is how much an instance's memory may grow between the first
// tenth of the calls and the end: a leak of 100 bytes per call over 100,000
// calls exceeds it.
const memoryBound = 8 << 20

func (s *suite) processMemory(inst *runtime.Instance) (string, error) {
	recs := append(sampleRecords(97), edgeRecords()...)
	var out runtime.Output
	var warm uint32
	for i := 0; i < s.calls; i++ {
		out.Reset()
		if err := inst.Process(s.ctx, recs[i%len(recs):i%len(recs)+1], &out); err != nil {
			return "", err
		}
		for _, e := range out.Failed {
			if runtime.IsCallFailure(e) {
				return "", fmt.Errorf("call %d: %w", i, e)
			}
		}
		if i == s.calls/10 {
			warm = inst.MemorySize()
		}
	}
	end := inst.MemorySize()
	detail := fmt.Sprintf("%d calls: memory %d KiB after %d calls, %d KiB at the end", s.calls, warm>>10, s.calls/10, end>>10)
	if inst.Rebuilds() > 0 {
		return "", errorf("%s; the instance was rebuilt %d times", detail, inst.Rebuilds())
	}
	if end > warm+memoryBound {
		return "", errorf("%s: grew by more than %d MiB (a leak)", detail, memoryBound>>20)
	}
	return detail, nil
}

// numericRecords are records whose values are small JSON integers, which any
// numeric aggregate can fold exactly.
func numericRecords(n int) []abi.Record {
	recs := make([]abi.Record, n)
	for i := range recs {
		recs[i] = abi.Record{Key: []byte("k"), Value: []byte(strconv.Itoa(i%50 + 1)), Timestamp: int64(i)}
	}
	return recs
}

// fold adds recs to acc in batches of size and returns the accumulator and
// the indexes of failed records; call-level failures are errors.
func fold(s *suite, inst *runtime.Instance, key, acc []byte, recs []abi.Record, size int) ([]byte, []int, error) {
	var failed []int
	for lo := 0; lo < len(recs); lo += size {
		hi := min(lo+size, len(recs))
		added, fails, err := inst.AggAdd(s.ctx, []abi.Group{{Key: key, Acc: acc, Records: recs[lo:hi]}}, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range fails {
			if runtime.IsCallFailure(e) {
				return nil, nil, fmt.Errorf("record %d: %w", lo+e.Index, e)
			}
			failed = append(failed, lo+e.Index)
		}
		if added[0].Acc != nil {
			acc = bytes.Clone(added[0].Acc)
		}
	}
	return acc, failed, nil
}

func (s *suite) result(inst *runtime.Instance, key, acc []byte) (string, error) {
	res, err := inst.AggResult(s.ctx, [][]byte{key}, [][]byte{acc}, nil)
	if err != nil {
		return "", err
	}
	if res[0].Err != nil {
		if runtime.IsCallFailure(res[0].Err) {
			return "", res[0].Err
		}
		return "error " + strconv.Itoa(int(res[0].Err.Code)), nil
	}
	return q(res[0].Bytes), nil
}

func (s *suite) aggInit(inst *runtime.Instance) (string, error) {
	acc, err := inst.AggInit(s.ctx)
	if err != nil {
		return "", err
	}
	r, err := s.result(inst, []byte("k"), acc)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("initial accumulator of %d bytes; its result: %s", len(acc), r), nil
}

// mergeSamples are the record sets aggregate/merge-consistency tries, in
// order: it checks the first of which the function folds a record, and
// fails when it refuses every record of every one (it would compare
// initial accumulators, testing nothing).
var mergeSamples = []struct {
	name string
	recs func(n int) []abi.Record
}{
	{"JSON numbers", numericRecords},
	{"JSON objects with a price (bids)", func(n int) []abi.Record {
		recs := numericRecords(n)
		for i := range recs {
			recs[i].Value = fmt.Appendf(nil, `{"auction":1,"bidder":%d,"price":%d,"dateTime":%d,"amount":%d}`, i%7, i%50+1, i, i%50+1)
		}
		return recs
	}},
	{"JSON objects with an id (persons and auctions)", func(n int) []abi.Record {
		recs := numericRecords(n)
		for i := range recs {
			if i%2 == 0 {
				recs[i].Value = []byte(`{"id":7,"name":"Ann","emailAddress":"a@b"}`)
			} else {
				recs[i].Value = fmt.Appendf(nil, `{"id":%d,"itemName":"x","seller":7,"category":10}`, 1000+i)
			}
		}
		return recs
	}},
	{"JSON objects with a count and a window (window results, tagged)", func(n int) []abi.Record {
		recs := numericRecords(n)
		for i := range recs {
			recs[i].Value = fmt.Appendf(nil, `{"auction":%d,"count":%d,"start":0,"end":10000}`, i%11, i%13)
		}
		return recs
	}},
	{"deltas of nx-daystats' distinct step (12 bytes)", func(n int) []abi.Record {
		recs := numericRecords(n)
		for i := range recs {
			// Version 1, the price rank, which counts of the bidder and of
			// the auction the bid is the first of (bit 0 all, bit r its
			// rank), the dateTime.
			rank, bidder, auction := byte(i%3+1), byte(0), byte(0)
			if i%4 == 0 {
				bidder = 1 | 1<<rank
			}
			if i%6 == 0 {
				auction = 1 << rank
			}
			recs[i].Value = binary.LittleEndian.AppendUint64([]byte{1, rank, bidder, auction}, uint64(1436918400000+i))
		}
		return recs
	}},
}

func (s *suite) aggMerge(inst *runtime.Instance) (string, error) {
	var tried []string
	for _, sample := range mergeSamples {
		recs := sample.recs(200)
		detail, folded, err := s.aggMergeOf(inst, recs)
		if err != nil {
			return "", fmt.Errorf("%s: %w", sample.name, err)
		}
		if folded {
			return fmt.Sprintf("%d %s: %s", len(recs), sample.name, detail), nil
		}
		tried = append(tried, sample.name)
	}
	return "", errorf("every record was refused (200 each of %s): the case would compare initial accumulators, testing nothing; fold at least one of them",
		strings.Join(tried, ", "))
}

// aggMergeOf checks that folding recs in one batch, one per call and in two
// merged parts give the same result; folded is false when the function
// refused every record.
func (s *suite) aggMergeOf(inst *runtime.Instance, recs []abi.Record) (detail string, folded bool, err error) {
	key := []byte("k")
	all, failedAll, err := fold(s, inst, key, nil, recs, len(recs))
	if err != nil {
		return "", false, err
	}
	if len(failedAll) == len(recs) {
		return "", false, nil
	}
	ones, failedOnes, err := fold(s, inst, key, nil, recs, 1)
	if err != nil {
		return "", true, err
	}
	a, _, err := fold(s, inst, key, nil, recs[:77], 77)
	if err != nil {
		return "", true, err
	}
	b, _, err := fold(s, inst, key, nil, recs[77:], 123)
	if err != nil {
		return "", true, err
	}
	merged, err := inst.AggMerge(s.ctx, [][]byte{key}, [][]byte{a}, [][]byte{b}, nil)
	if err != nil {
		return "", true, err
	}
	if merged[0].Err != nil {
		return "", true, fmt.Errorf("merge: %w", merged[0].Err)
	}
	rAll, err := s.result(inst, key, all)
	if err != nil {
		return "", true, err
	}
	rOnes, err := s.result(inst, key, ones)
	if err != nil {
		return "", true, err
	}
	rMerged, err := s.result(inst, key, merged[0].Bytes)
	if err != nil {
		return "", true, err
	}
	switch {
	case !slices.Equal(failedAll, failedOnes):
		return "", true, errorf("failed records differ: one batch %v, one per call %v", failedAll, failedOnes)
	case rAll != rOnes:
		return "", true, errorf("results differ: one batch %s, one record per call %s", rAll, rOnes)
	case rAll != rMerged:
		return "", true, errorf("results differ: one batch %s, merge of two halves %s", rAll, rMerged)
	}
	return fmt.Sprintf("one batch, one per call and merge(77, 123) all give %s (%d refused)", rAll, len(failedAll)), true, nil
}

func (s *suite) aggEdges(inst *runtime.Instance) (string, error) {
	recs := edgeRecords()
	_, f1, err := fold(s, inst, nil, nil, recs, len(recs))
	if err != nil {
		return "", err
	}
	_, f2, err := fold(s, inst, []byte{}, nil, recs, 1)
	if err != nil {
		return "", err
	}
	if !slices.Equal(f1, f2) {
		return "", errorf("failed records differ by batch size: one batch %v, one per call %v", f1, f2)
	}
	return fmt.Sprintf("%d edge records under nil and empty keys (%d refused)", len(recs), len(f1)), nil
}

func (s *suite) aggMemory(inst *runtime.Instance) (string, error) {
	recs := numericRecords(100)
	var acc []byte
	var warm uint32
	for i := 0; i < s.calls; i++ {
		var err error
		if acc, _, err = fold(s, inst, []byte("k"), acc, recs[i%len(recs):i%len(recs)+1], 1); err != nil {
			return "", fmt.Errorf("call %d: %w", i, err)
		}
		if i == s.calls/10 {
			warm = inst.MemorySize()
		}
	}
	end := inst.MemorySize()
	detail := fmt.Sprintf("%d add calls: memory %d KiB after %d calls, %d KiB at the end", s.calls, warm>>10, s.calls/10, end>>10)
	if end > warm+memoryBound || inst.Rebuilds() > 0 {
		return "", errorf("%s, %d rebuilds: memory is not bounded", detail, inst.Rebuilds())
	}
	return detail, nil
}

func (s *suite) joinBatchSizes(inst *runtime.Instance) (string, error) {
	recs := append(sampleRecords(100), edgeRecords()...)
	n := len(recs)
	keys, left, right := make([][]byte, n), make([][]byte, n), make([][]byte, n)
	for i, r := range recs {
		keys[i] = r.Key
		if i%3 != 1 {
			left[i] = r.Value
		}
		if i%3 != 2 {
			right[i] = recs[(i+1)%n].Value
		}
	}
	run := func(size int) (outcome, error) {
		res := make(outcome, n)
		for lo := 0; lo < n; lo += size {
			hi := min(lo+size, n)
			out, err := inst.Join(s.ctx, keys[lo:hi], left[lo:hi], right[lo:hi], nil)
			if err != nil {
				return nil, err
			}
			for j, r := range out {
				if r.Err != nil {
					if runtime.IsCallFailure(r.Err) {
						return nil, fmt.Errorf("item %d: %w", lo+j, r.Err)
					}
					res[lo+j] = "error " + strconv.Itoa(int(r.Err.Code))
					continue
				}
				res[lo+j] = q(r.Bytes)
			}
		}
		return res, nil
	}
	if out, err := inst.Join(s.ctx, nil, nil, nil, nil); err != nil || len(out) != 0 {
		return "", errorf("empty batch: got error %v and %d results, want no error and 0 results", err, len(out))
	}
	whole, err := run(n)
	if err != nil {
		return "", err
	}
	ones, err := run(1)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("join in one batch vs one per call", "one batch", whole, "one per call", ones); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d pairs with missing left, right and both sides agree across batch sizes", n), nil
}

func (s *suite) extractBatchSizes(kind abi.Kind) func(*runtime.Instance) (string, error) {
	return func(inst *runtime.Instance) (string, error) {
		recs := append(sampleRecords(200), edgeRecords()...)
		call := inst.Key
		if kind == abi.KindTimestamp {
			call = inst.Timestamp
		}
		run := func(size int) (outcome, error) {
			res := make(outcome, len(recs))
			for lo := 0; lo < len(recs); lo += size {
				hi := min(lo+size, len(recs))
				out, err := call(s.ctx, recs[lo:hi], nil)
				if err != nil {
					return nil, err
				}
				for j, r := range out {
					switch {
					case r.Err != nil && runtime.IsCallFailure(r.Err):
						return nil, fmt.Errorf("record %d: %w", lo+j, r.Err)
					case r.Err != nil:
						res[lo+j] = "error " + strconv.Itoa(int(r.Err.Code))
					default:
						res[lo+j] = q(r.Bytes) + " " + strconv.FormatInt(r.Int, 10)
					}
				}
			}
			return res, nil
		}
		if out, err := call(s.ctx, nil, nil); err != nil || len(out) != 0 {
			return "", errorf("empty batch: got error %v and %d results, want no error and 0 results", err, len(out))
		}
		whole, err := run(len(recs))
		if err != nil {
			return "", err
		}
		ones, err := run(1)
		if err != nil {
			return "", err
		}
		if err := sameOutcome(string(kind)+" in one batch vs one per call", "one batch", whole, "one per call", ones); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d records agree across batch sizes", len(recs)), nil
	}
}
