package abi

import (
	"github.com/eddy-streams/eddy/abi/msgpack"
)

// Every envelope in this file stays on the hand-written codec (issue 19):
// they are on the per-record and per-group paths, where msgpack/v5's
// streaming API measured two to five times slower, with the same
// allocations (BENCHMARKS.md, "msgpack/v5 beside the hand-written codec").
// DecodeRecords (tests and tools) and DecodeValue (eddy_agg_init's answer,
// read once per instance) are not on such a path, but each is a few lines
// around the reader of a hot decoder (readRecord, readValue): moving them
// to v5 would mean a second reader of the same grammar to keep in step.

// AppendRecord appends one Record (ABI.md 5.2).
func AppendRecord(b []byte, r *Record) []byte {
	b = append(b, 0x94)
	b = msgpack.AppendBin(b, r.Key)
	b = msgpack.AppendBin(b, r.Value)
	b = msgpack.AppendInt(b, r.Timestamp)
	return appendHeaders(b, r.Headers)
}

func appendHeaders(b []byte, hs []Header) []byte {
	b = msgpack.AppendArrayHeader(b, len(hs))
	for i := range hs {
		b = append(b, 0x92)
		b = msgpack.AppendStr(b, hs[i].Key)
		b = msgpack.AppendBin(b, hs[i].Value)
	}
	return b
}

// AppendRecords appends a batch of records: the input envelope of
// eddy_process, eddy_key and eddy_timestamp.
func AppendRecords(b []byte, recs []Record) []byte {
	b = msgpack.AppendArrayHeader(b, len(recs))
	for i := range recs {
		b = AppendRecord(b, &recs[i])
	}
	return b
}

// ProcessOutput is the decoded answer of eddy_process. It is meant to be
// reused: Reset keeps the capacity of its slices.
type ProcessOutput struct {
	// Records are the output records in order.
	Records []Record
	// From[i] is the index of the input record that produced Records[i].
	From []int32
	// Errors are the input records the function failed on.
	Errors []ItemError
}

// Reset empties o, keeping its capacity.
func (o *ProcessOutput) Reset() {
	clear(o.Records) // drop references into old buffers
	o.Records, o.From, o.Errors = o.Records[:0], o.From[:0], o.Errors[:0]
}

// DecodeProcessOutput decodes an eddy_process answer for the input batch in and
// appends it to out. Output records with a nil timestamp get the timestamp of
// their input record. Byte slices in out are views into b.
func DecodeProcessOutput(b []byte, in []Record, out *ProcessOutput) error {
	var r msgpack.Reader
	r.Reset(b)
	n, err := r.ArrayHeader()
	if err != nil {
		return malformed("process results: %v", err)
	}
	if n != len(in) {
		return malformed("process results: %d results for %d records", n, len(in))
	}
	// The limits count this answer only: out may hold earlier answers.
	records, headers := 0, 0
	for i := 0; i < n; i++ {
		code, err := readResultHead(&r)
		if err != nil {
			return malformed("result %d: %v", i, err)
		}
		if code != CodeOK {
			reason, err := readReason(&r)
			if err != nil {
				return malformed("result %d: reason: %v", i, err)
			}
			out.Errors = append(out.Errors, ItemError{Index: i, Code: code, Reason: reason})
			continue
		}
		k, err := r.ArrayHeader()
		if err != nil {
			return malformed("result %d: records: %v", i, err)
		}
		if k > r.Len()/minRecordBytes {
			return malformed("result %d: %d records cannot fit in the %d bytes left", i, k, r.Len())
		}
		if records += k; records > MaxOutputRecords {
			return malformed("result %d: more than %d output records in one answer (the limit)", i, MaxOutputRecords)
		}
		for j := 0; j < k; j++ {
			out.Records = append(out.Records, Record{})
			rec := &out.Records[len(out.Records)-1]
			if err := readRecord(&r, rec, in[i].Timestamp, &headers); err != nil {
				return malformed("result %d: record %d: %v", i, j, err)
			}
			out.From = append(out.From, int32(i))
		}
	}
	if r.Len() != 0 {
		return malformed("process results: %d trailing bytes", r.Len())
	}
	return nil
}

// readResultHead reads "[code," of a Result, leaving the body.
func readResultHead(r *msgpack.Reader) (Code, error) {
	m, err := r.ArrayHeader()
	if err != nil {
		return 0, err
	}
	if m != 2 {
		return 0, errorf("result has %d elements, want 2", m)
	}
	c, err := r.Int()
	if err != nil {
		return 0, err
	}
	if c < 0 || c > 1<<31-1 {
		return 0, errorf("code %d out of range", c)
	}
	return Code(c), nil
}

// readRecord decodes a Record into rec; a nil timestamp becomes inherit.
// headers counts the headers decoded so far in a guest's answer, against
// MaxRecordHeaders and MaxOutputHeaders; nil (an input envelope, which
// carries what Kafka delivered) applies neither.
func readRecord(r *msgpack.Reader, rec *Record, inherit int64, headers *int) error {
	m, err := r.ArrayHeader()
	if err != nil {
		return err
	}
	if m != 4 {
		return errorf("record has %d elements, want 4", m)
	}
	if rec.Key, err = r.Bytes(); err != nil {
		return wrap("key", err)
	}
	if rec.Value, err = r.Bytes(); err != nil {
		return wrap("value", err)
	}
	if r.IsNil() {
		_ = r.Nil()
		rec.Timestamp = inherit
	} else if rec.Timestamp, err = r.Int(); err != nil {
		return wrap("timestamp", err)
	}
	if r.IsNil() {
		_ = r.Nil()
		rec.Headers = nil
		return nil
	}
	h, err := r.ArrayHeader()
	if err != nil {
		return wrap("headers", err)
	}
	if h == 0 {
		rec.Headers = nil
		return nil
	}
	// Check the count before allocating for it: against what is left, and
	// against the limits.
	switch {
	case h > r.Len()/minHeaderBytes:
		return errorf("%d headers cannot fit in the %d bytes left", h, r.Len())
	case headers == nil:
	case h > MaxRecordHeaders:
		return errorf("%d headers, more than the limit of %d per record", h, MaxRecordHeaders)
	case *headers+h > MaxOutputHeaders:
		return errorf("more than %d headers in one answer (the limit)", MaxOutputHeaders)
	default:
		*headers += h
	}
	rec.Headers = make([]Header, h)
	for i := range rec.Headers {
		if p, err := r.ArrayHeader(); err != nil || p != 2 {
			if err == nil {
				err = errorf("header has %d elements, want 2", p)
			}
			return wrap("header", err)
		}
		if rec.Headers[i].Key, err = r.Str(); err != nil {
			return wrap("header name", err)
		}
		if rec.Headers[i].Value, err = r.Bytes(); err != nil {
			return wrap("header value", err)
		}
	}
	return nil
}

// DecodeRecords decodes a batch of records (an input envelope). It is the
// guest-side direction, used by tests and tools; b must outlive the result.
func DecodeRecords(b []byte, out []Record) ([]Record, error) {
	var r msgpack.Reader
	r.Reset(b)
	n, err := r.ArrayHeader()
	if err != nil {
		return out, malformed("records: %v", err)
	}
	if n > r.Len()/minRecordBytes {
		return out, malformed("records: %d records cannot fit in the %d bytes left", n, r.Len())
	}
	for i := 0; i < n; i++ {
		out = append(out, Record{})
		if err := readRecord(&r, &out[len(out)-1], 0, nil); err != nil {
			return out, malformed("record %d: %v", i, err)
		}
	}
	if r.Len() != 0 {
		return out, malformed("records: %d trailing bytes", r.Len())
	}
	return out, nil
}

// AppendResultError appends a failed Result: [code, reason].
func AppendResultError(b []byte, code Code, reason string) []byte {
	b = append(b, 0x92)
	b = msgpack.AppendInt(b, int64(code))
	return msgpack.AppendStr(b, reason)
}

// AppendProcessResult appends a successful eddy_process Result holding recs.
func AppendProcessResult(b []byte, recs []Record) []byte {
	b = append(b, 0x92, 0x00)
	return AppendRecords(b, recs)
}

// Group is one key's input to eddy_agg_add.
type Group struct {
	Key     []byte
	Acc     []byte // nil: start from the initial accumulator
	Records []Record
}

// AppendAggAddInput appends the eddy_agg_add envelope for groups.
func AppendAggAddInput(b []byte, groups []Group) []byte {
	b = msgpack.AppendArrayHeader(b, len(groups))
	for i := range groups {
		g := &groups[i]
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, g.Key)
		b = msgpack.AppendBin(b, g.Acc)
		b = AppendRecords(b, g.Records)
	}
	return b
}

// Added is the answer of eddy_agg_add for one group.
type Added struct {
	Acc    []byte
	Errors []ItemError
}

// DecodeAggAddOutput decodes an eddy_agg_add answer for groups, appending one
// Added per group to out.
func DecodeAggAddOutput(b []byte, groups []Group, out []Added) ([]Added, error) {
	var r msgpack.Reader
	r.Reset(b)
	n, err := r.ArrayHeader()
	if err != nil {
		return out, malformed("add results: %v", err)
	}
	if n != len(groups) {
		return out, malformed("add results: %d results for %d groups", n, len(groups))
	}
	for i := 0; i < n; i++ {
		if m, err := r.ArrayHeader(); err != nil || m != 2 {
			if err == nil {
				err = errorf("has %d elements, want 2", m)
			}
			return out, malformed("group %d: %v", i, err)
		}
		acc, err := r.Bytes()
		if err != nil {
			return out, malformed("group %d: accumulator: %v", i, err)
		}
		if acc == nil {
			return out, malformed("group %d: accumulator is nil", i)
		}
		a := Added{Acc: acc}
		e, err := r.ArrayHeader()
		if err != nil {
			return out, malformed("group %d: errors: %v", i, err)
		}
		if e > len(groups[i].Records) {
			// Each record is reported at most once.
			return out, malformed("group %d: %d errors for %d records", i, e, len(groups[i].Records))
		}
		for j := 0; j < e; j++ {
			ie, err := readItemError(&r)
			if err != nil {
				return out, malformed("group %d: error %d: %v", i, j, err)
			}
			if ie.Index < 0 || ie.Index >= len(groups[i].Records) {
				return out, malformed("group %d: error %d: index %d out of range", i, j, ie.Index)
			}
			a.Errors = append(a.Errors, ie)
		}
		out = append(out, a)
	}
	if r.Len() != 0 {
		return out, malformed("add results: %d trailing bytes", r.Len())
	}
	return out, nil
}

func readItemError(r *msgpack.Reader) (ItemError, error) {
	var ie ItemError
	m, err := r.ArrayHeader()
	if err != nil {
		return ie, err
	}
	if m != 3 {
		return ie, errorf("record error has %d elements, want 3", m)
	}
	idx, err := r.Int()
	if err != nil {
		return ie, wrap("index", err)
	}
	code, err := r.Int()
	if err != nil {
		return ie, wrap("code", err)
	}
	if code <= 0 || code > 1<<31-1 {
		return ie, errorf("code %d out of range", code)
	}
	if ie.Reason, err = readReason(r); err != nil {
		return ie, wrap("reason", err)
	}
	if idx < 0 || idx > 1<<31-1 {
		return ie, errorf("index %d out of range", idx)
	}
	ie.Index, ie.Code = int(idx), Code(code)
	return ie, nil
}

// AppendTriples appends [[a, b, c] × N]: the envelope of eddy_agg_merge
// (key, a, b) and eddy_join (key, left, right).
func AppendTriples(b []byte, n int, at func(i int) (x, y, z []byte)) []byte {
	b = msgpack.AppendArrayHeader(b, n)
	for i := 0; i < n; i++ {
		x, y, z := at(i)
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, x)
		b = msgpack.AppendBin(b, y)
		b = msgpack.AppendBin(b, z)
	}
	return b
}

// AppendPairs appends [[a, b] × N]: the envelope of eddy_agg_result (key, acc).
func AppendPairs(b []byte, n int, at func(i int) (x, y []byte)) []byte {
	b = msgpack.AppendArrayHeader(b, n)
	for i := 0; i < n; i++ {
		x, y := at(i)
		b = append(b, 0x92)
		b = msgpack.AppendBin(b, x)
		b = msgpack.AppendBin(b, y)
	}
	return b
}

// Value is one decoded Result whose body is bytes? or int.
type Value struct {
	Code   Code // CodeOK, or the failure code
	Reason string
	Bytes  []byte // body when it is bytes?
	Int    int64  // body when it is an int (eddy_timestamp)
}

// BodyType says what a Result body holds.
type BodyType int

// Body types of Results.
const (
	BodyBytes  BodyType = iota // bytes or nil
	BodyNonNil                 // bytes, nil not allowed (accumulators)
	BodyInt                    // int (timestamps)
)

// DecodeValues decodes [Result × n] whose bodies are of type t, appending to out.
func DecodeValues(b []byte, n int, t BodyType, out []Value) ([]Value, error) {
	var r msgpack.Reader
	r.Reset(b)
	m, err := r.ArrayHeader()
	if err != nil {
		return out, malformed("results: %v", err)
	}
	if m != n {
		return out, malformed("results: %d results for %d inputs", m, n)
	}
	for i := 0; i < n; i++ {
		v, err := readValue(&r, t)
		if err != nil {
			return out, malformed("result %d: %v", i, err)
		}
		out = append(out, v)
	}
	if r.Len() != 0 {
		return out, malformed("results: %d trailing bytes", r.Len())
	}
	return out, nil
}

// DecodeValue decodes a single Result (the answer of eddy_agg_init).
func DecodeValue(b []byte, t BodyType) (Value, error) {
	var r msgpack.Reader
	r.Reset(b)
	v, err := readValue(&r, t)
	if err != nil {
		return v, malformed("result: %v", err)
	}
	if r.Len() != 0 {
		return v, malformed("result: %d trailing bytes", r.Len())
	}
	return v, nil
}

func readValue(r *msgpack.Reader, t BodyType) (Value, error) {
	var v Value
	code, err := readResultHead(r)
	if err != nil {
		return v, err
	}
	v.Code = code
	if code != CodeOK {
		v.Reason, err = readReason(r)
		return v, wrap("reason", err)
	}
	switch t {
	case BodyInt:
		v.Int, err = r.Int()
	default:
		v.Bytes, err = r.Bytes()
		if err == nil && t == BodyNonNil && v.Bytes == nil {
			err = errorf("body is nil")
		}
	}
	return v, wrap("body", err)
}
