package eddy

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
	"github.com/eddy-streams/eddy/sdk/go/internal/native"
)

// This file is the SDK's side of ABI.md section 5: input envelope in, output
// envelope out. It is plain Go, the same on wasip1 and natively; the wasip1
// exports (exports_wasip1.go) only move bytes in and out of linear memory.
//
// # Why it looks the way it does
//
// The per-record path allocates nothing: records are decoded as views into
// the input buffer into a reused slice (codec.go), and the answer is appended
// to one output buffer that lives until the next call (ABI.md 6.5 lets the
// guest reuse it).
//
// A panic in user code fails only its item. Rather than a deferred recover
// around every call of user code, which costs about 200 ns a record in Go
// compiled to Wasm, run installs one per batch: after a panic it answers the
// item that panicked with PANIC and starts again with the next item.
//
// With wazero 1.12 (compiler engine) the SDK's own cost for a Map that
// returns its input is about 360 ns a record of 200 bytes, decoding and
// encoding included; Go compiled to Wasm is some ten times slower than
// native Go on this kind of code, mostly because of calls and branches.

// SDKVersion is what the manifest reports in its "sdk" key.
const SDKVersion = "go/0.1.0"

// export names the exports of ABI.md section 2 that take an envelope.
type export int

const (
	expProcess export = iota
	expAggInit
	expAggAdd
	expAggMerge
	expAggResult
	expJoin
	expKey
	expTimestamp
	expTimer
	expManifest
)

var exportNames = [...]string{
	expProcess:   "eddy_process",
	expAggInit:   "eddy_agg_init",
	expAggAdd:    "eddy_agg_add",
	expAggMerge:  "eddy_agg_merge",
	expAggResult: "eddy_agg_result",
	expJoin:      "eddy_join",
	expKey:       "eddy_key",
	expTimestamp: "eddy_timestamp",
	expTimer:     "eddy_timer",
	expManifest:  "eddy_manifest",
}

func init() {
	native.Call = callByName
}

// callByName runs the export called name on envelope in; it is the hook that
// lets package eddytest drive a guest natively.
func callByName(name string, in []byte) ([]byte, int32) {
	for e, n := range exportNames {
		if n == name {
			return invoke(export(e), in)
		}
	}
	reportError(codeUnsupported, "no export named "+strconv.Quote(name))
	return nil, codeUnsupported
}

// callError is a failure of a whole call: the export returns -code after
// reporting msg through the error host function.
type callError struct {
	code int32
	msg  string
}

// badEnvelope fails a whole call whose input cannot be decoded at all.
func badEnvelope(err error) *callError { return &callError{codeBadEnvelope, err.Error()} }

// invoke runs export e on the input envelope in. On success it returns the
// output envelope (valid until the next call) and 0; on a call-level failure
// it reports the reason with the error host function and returns nil and the
// code, which the export negates.
func invoke(e export, in []byte) ([]byte, int32) {
	var err *callError
	switch e {
	case expProcess:
		err = g.process(in)
	case expAggInit:
		g.aggInit()
	case expAggAdd:
		err = g.aggAdd(in)
	case expAggMerge:
		err = g.aggMerge(in)
	case expAggResult:
		err = g.aggResult(in)
	case expJoin:
		err = g.join(in)
	case expKey:
		err = g.key(in)
	case expTimestamp:
		err = g.timestamp(in)
	case expTimer:
		err = g.timers(in)
	case expManifest:
		g.out = appendManifest(g.out[:0])
	}
	if err != nil {
		reportError(err.code, exportNames[e]+": "+err.msg)
		return nil, err.code
	}
	return g.out, 0
}

// g holds the buffers reused across calls.
var g guest

type guest struct {
	r     msgpack.Reader
	out   []byte   // the output envelope; lives until the next call
	recs  []Record // decoded records of the batch (views into the input)
	hdrs  []Header // headers of all records of the batch
	items []item   // decoded join, merge and result items
	fired []Timer  // decoded timers of eddy_timer
	names map[string]string

	// Aggregation: the groups of an eddy_agg_add call, the two scratch
	// accumulators, which one holds the current value, and the records of
	// the current group that were not folded; the initial accumulator, made
	// at most once per call.
	groups   []group
	acc      [2][]byte
	accv     []byte
	cur      int
	recErrs  []recordError
	init     []byte
	initErr  error
	initDone bool
}

// item is one [key, a, b] or [key, acc] entry of eddy_join, eddy_agg_merge
// or eddy_agg_result.
type item struct{ key, a, b []byte }

// group is one Group of eddy_agg_add; its records are recs[lo:hi].
type group struct {
	key, acc []byte
	lo, hi   int
}

type recordError struct {
	index  int
	code   int32
	reason string
}

// step answers item i of a batch: it runs the user function and appends the
// item's Result to b.
type step func(g *guest, b []byte, i int) []byte

// run appends the answers of items [0, n) made by st, recovering from panics
// in user code: a panic fails its item with PANIC, the others go on.
func (g *guest) run(b []byte, n int, st step) []byte {
	for i := 0; i < n; {
		b, i = g.runFrom(b, i, n, st)
	}
	return b
}

// runFrom answers items from i on until the end or a panic, and returns the
// index of the next item to answer.
func (g *guest) runFrom(b []byte, i, n int, st step) (out []byte, next int) {
	defer func() {
		if v := recover(); v != nil {
			// b holds the answers before item i, which panicked.
			out, next = appendError(b, panicError(v)), i+1
		}
	}()
	for ; i < n; i++ {
		b = st(g, b, i)
	}
	return b, i
}

// runMap is run for Map, with the step written out: it saves an indirect
// call and two direct ones per record on the hottest path (some 70 ns in Go
// compiled to Wasm).
func (g *guest) runMap(b []byte) []byte {
	for i := 0; i < len(g.recs); {
		b, i = g.mapFrom(b, i)
	}
	return b
}

// mapFrom is runFrom for Map.
func (g *guest) mapFrom(b []byte, i int) (out []byte, next int) {
	defer func() {
		if v := recover(); v != nil {
			out, next = appendError(b, panicError(v)), i+1
		}
	}()
	fn := reg.mapFn
	for ; i < len(g.recs); i++ {
		in := &g.recs[i]
		r, err := fn(*in)
		if err != nil {
			b = appendError(b, err)
			continue
		}
		// appendMapResult(b, &r, in.Timestamp), written out.
		kl, vl := len(r.Key), len(r.Value)
		if kl > math.MaxUint8 || vl > math.MaxUint16 || r.Key == nil || r.Value == nil ||
			len(r.Headers) != 0 || r.Timestamp != in.Timestamp {
			b = append(b, 0x92, 0x00, 0x91)
			b = appendRecord(b, &r, in.Timestamp)
			continue
		}
		need := 4 + 2 + kl + 3 + vl + 2
		if cap(b)-len(b) < need {
			b = grow(b, need)
		}
		n := len(b)
		o := b[n : n+need]
		binary.LittleEndian.PutUint32(o, 0x94_91_00_92)
		o[4], o[5] = msgpack.Bin8, byte(kl)
		if k := r.Key; kl >= 8 && kl <= 16 {
			binary.LittleEndian.PutUint64(o[6+kl-8:], binary.LittleEndian.Uint64(k[kl-8:]))
			binary.LittleEndian.PutUint64(o[6:], binary.LittleEndian.Uint64(k))
		} else {
			copy(o[6:], k)
		}
		p := 6 + kl
		if vl <= math.MaxUint8 {
			o[p], o[p+1] = msgpack.Bin8, byte(vl)
			p += 2
		} else {
			o[p], o[p+1], o[p+2] = msgpack.Bin16, byte(vl>>8), byte(vl)
			p += 3
		}
		p += copy(o[p:], r.Value)
		o[p], o[p+1] = msgpack.Nil, 0x90
		b = b[:n+p+2]
	}
	return b, i
}

func filterStep(g *guest, b []byte, i int) []byte {
	in := &g.recs[i]
	keep, err := reg.filterFn(*in)
	switch {
	case err != nil:
		return appendError(b, err)
	case keep:
		return appendMapResult(b, in, in.Timestamp)
	}
	return append(b, 0x92, 0x00, 0x90)
}

func flatMapStep(g *guest, b []byte, i int) []byte {
	in := &g.recs[i]
	outs, err := reg.flatMapFn(*in)
	if err != nil {
		return appendError(b, err)
	}
	b = append(b, 0x92, 0x00)
	b = msgpack.AppendArrayHeader(b, len(outs))
	for j := range outs {
		b = appendRecord(b, &outs[j], in.Timestamp)
	}
	return b
}

func keyStep(g *guest, b []byte, i int) []byte {
	k, err := reg.keyFn(g.recs[i])
	if err != nil {
		return appendError(b, err)
	}
	return msgpack.AppendBin(append(b, 0x92, 0x00), k)
}

func timestampStep(g *guest, b []byte, i int) []byte {
	ts, err := reg.timeFn(g.recs[i])
	if err != nil {
		return appendError(b, err)
	}
	return msgpack.AppendInt(append(b, 0x92, 0x00), ts)
}

func joinStep(g *guest, b []byte, i int) []byte {
	it := &g.items[i]
	v, err := reg.joinFn(it.key, it.a, it.b)
	if err != nil {
		return appendError(b, err)
	}
	return msgpack.AppendBin(append(b, 0x92, 0x00), v)
}

func mergeStep(g *guest, b []byte, i int) []byte {
	it := &g.items[i]
	v, err := reg.agg.Merge(it.key, it.a, it.b)
	if err != nil {
		return appendError(b, err)
	}
	return appendNonNil(append(b, 0x92, 0x00), v)
}

func resultStep(g *guest, b []byte, i int) []byte {
	it := &g.items[i]
	v, err := reg.agg.Result(it.key, it.a)
	if err != nil {
		return appendError(b, err)
	}
	return msgpack.AppendBin(append(b, 0x92, 0x00), v)
}

// identityStep answers an accumulator as the result (no Aggregator.Result).
func identityStep(g *guest, b []byte, i int) []byte {
	return msgpack.AppendBin(append(b, 0x92, 0x00), g.items[i].a)
}

// records decodes a batch of records and answers them with st, or with
// runMap if st is nil: the shared body of eddy_process, eddy_key and
// eddy_timestamp.
func (g *guest) records(in []byte, st step) *callError {
	n, err := g.readRecords(in)
	if n < 0 {
		return badEnvelope(err)
	}
	b := msgpack.AppendArrayHeader(g.out[:0], n)
	if err != nil {
		g.out = failAll(b, n, codeBadEnvelope, err.Error())
		return nil
	}
	if st == nil {
		g.out = g.runMap(b)
	} else {
		g.out = g.run(b, n, st)
	}
	return nil
}

// itemsWith decodes a batch of [key, a, b] or [key, acc] items and answers them
// with st: the shared body of eddy_join, eddy_agg_merge and eddy_agg_result.
func (g *guest) itemsWith(in []byte, width int, st step) *callError {
	n, err := g.readItems(in, width)
	if n < 0 {
		return badEnvelope(err)
	}
	b := msgpack.AppendArrayHeader(g.out[:0], n)
	if err != nil {
		g.out = failAll(b, n, codeBadEnvelope, err.Error())
		return nil
	}
	g.out = g.run(b, n, st)
	return nil
}

// process answers eddy_process: [Record × N] → [Result × N], body =
// [Record × k].
func (g *guest) process(in []byte) *callError {
	switch {
	case reg.mapFn != nil:
		return g.records(in, nil) // runMap
	case reg.filterFn != nil:
		return g.records(in, filterStep)
	case reg.flatMapFn != nil:
		return g.records(in, flatMapStep)
	}
	return g.unsupported(in, "process")
}

// key answers eddy_key: [Record × N] → [Result × N], body = key bytes?.
func (g *guest) key(in []byte) *callError {
	if reg.keyFn == nil {
		return g.unsupported(in, "key")
	}
	return g.records(in, keyStep)
}

// timestamp answers eddy_timestamp: [Record × N] → [Result × N], body = int.
func (g *guest) timestamp(in []byte) *callError {
	if reg.timeFn == nil {
		return g.unsupported(in, "timestamp")
	}
	return g.records(in, timestampStep)
}

// join answers eddy_join: [[key, left, right] × N] → [Result × N], body =
// bytes?.
func (g *guest) join(in []byte) *callError {
	if reg.joinFn == nil {
		return g.unsupported(in, "join")
	}
	return g.itemsWith(in, 3, joinStep)
}

// unsupported answers every item of a kind that is not registered.
func (g *guest) unsupported(in []byte, kind string) *callError {
	n, err := g.count(in)
	if n < 0 {
		return badEnvelope(err)
	}
	b := msgpack.AppendArrayHeader(g.out[:0], n)
	g.out = failAll(b, n, codeUnsupported, "this module implements no "+kind+" function")
	return nil
}

// aggInit answers eddy_agg_init: one Result, body = the initial accumulator.
// Its input is empty and ignored.
func (g *guest) aggInit() {
	b := g.out[:0]
	if reg.agg == nil {
		g.out = appendFailure(b, codeUnsupported, "this module implements no aggregate function")
		return
	}
	acc, err := callInit(reg.agg.Init)
	if err != nil {
		g.out = appendError(b, err)
		return
	}
	g.out = appendNonNil(append(b, 0x92, 0x00), acc)
}

// aggAdd answers eddy_agg_add: [Group × G] → [Added × G].
//
// Added has no failure code of its own, so an envelope that is not a valid
// list of groups fails the whole call with BAD_ENVELOPE, and a module without
// an aggregate reports every record as UNSUPPORTED.
//
// A window over many keys sends many groups of a record or two, so the cost
// per group matters as much as the cost per record: groups in the shape the
// host writes are decoded by straight-line code (readGroups), the records of
// every group by decodeRecords, and the whole batch is folded behind one
// deferred recover (foldFrom) rather than one per group.
func (g *guest) aggAdd(in []byte) *callError {
	n, err := g.count(in)
	if n < 0 {
		return badEnvelope(err)
	}
	if err := g.readGroups(in, n); err != nil {
		return badEnvelope(err)
	}
	g.out = msgpack.AppendArrayHeader(g.out[:0], n)
	if reg.agg == nil {
		for i := range g.groups {
			gr := &g.groups[i]
			g.recErrs = g.recErrs[:0]
			for j := range gr.hi - gr.lo {
				g.recErrs = append(g.recErrs, recordError{j, codeUnsupported, "this module implements no aggregate function"})
			}
			g.out = g.appendAdded(g.out, gr.acc)
		}
		return nil
	}
	g.init, g.initErr, g.initDone = nil, nil, false
	for gi, ri := 0, 0; gi < n; {
		gi, ri = g.foldFrom(gi, ri)
	}
	g.init = nil // do not keep Init's answer alive
	return nil
}

// readGroups decodes the n groups of an eddy_agg_add envelope, whose count
// g.count has read, into g.groups and their records into g.recs.
//
// A group in the shape the host writes,
//
//	93  c4 KL key | c0  c4 AL acc | c0  9N | dc NH NL  records...
//
// has its header read by the straight-line code in the loop; any other
// shape goes through the general reader.
func (g *guest) readGroups(in []byte, n int) error {
	if cap(g.groups) < n {
		g.groups = make([]group, n)
	}
	g.groups = g.groups[:n]
	g.recs = g.recs[:0]
	g.hdrs = g.hdrs[:0]
	off := g.r.Offset()
	for i := range g.groups {
		gr := &g.groups[i]
		k := -1 // the group's record count, once its header is read
		if p := in[off:]; len(p) >= 4 {
			ks, kl := 3, int(p[2]) // key start and length, for bin 8
			if p[1] == msgpack.Nil {
				ks, kl = 2, 0
			}
			as := ks + kl // accumulator header
			if len(p) >= as+3 {
				af := p[as]
				ad, al := as+2, int(p[as+1]) // accumulator start and length, for bin 8
				if af == msgpack.Nil {
					ad, al = as+1, 0
				}
				rs := ad + al // records header
				if len(p) > rs && (p[0]^0x93)|((p[1]^msgpack.Bin8)&(p[1]^msgpack.Nil))|((af^msgpack.Bin8)&(af^msgpack.Nil)) == 0 {
					h := 0
					if c := p[rs]; c&0xf0 == 0x90 {
						k, h = int(c&0x0f), 1
					} else if c == msgpack.Array16 && len(p) >= rs+3 {
						k, h = int(p[rs+1])<<8|int(p[rs+2]), 3
					}
					// Every record takes at least a byte (as in the
					// general reader, so that no count makes us allocate
					// for records that cannot be there).
					if k > len(p)-rs-h {
						k = -1
					}
					if k >= 0 {
						gr.key, gr.acc = nil, nil
						if ks == 3 {
							gr.key = p[3:as:as]
						}
						if af == msgpack.Bin8 {
							gr.acc = p[ad:rs:rs]
						}
						off += rs + h
					}
				}
			}
		}
		if k < 0 {
			r := &g.r
			r.ResetAt(in, off)
			if m := r.ArrayLen(); m != 3 {
				r.Fail(errItemShape)
			}
			gr.key, gr.acc = r.Bytes(), r.Bytes()
			k = r.ArrayLen()
			if r.Err() != nil {
				return envelopeError("group", i, r.Err())
			}
			off = r.Offset()
		}
		gr.lo, gr.hi = len(g.recs), len(g.recs)+k
		g.recs = slices.Grow(g.recs, k)[:gr.hi]
		var err error
		if off, _, err = g.decodeRecords(in, off, g.recs[gr.lo:gr.hi]); err != nil {
			return envelopeError("group", i, err)
		}
	}
	g.r.ResetAt(in, off)
	return g.trailing()
}

// foldFrom folds the groups from gi on, starting with record ri of group gi
// (ri is 0 unless a record of group gi panicked), and appends an Added for
// each to g.out. It returns where to go on after a panic in user code, which
// fails only the record that panicked.
//
// Add gets a scratch copy of the accumulator, so it may change it in place;
// two scratch buffers alternate so that a failed Add leaves the previous
// accumulator intact, and the input envelope is never written.
func (g *guest) foldFrom(gi, ri int) (nextGroup, nextRecord int) {
	defer func() {
		if v := recover(); v != nil {
			code, reason := failure(panicError(v))
			g.recErrs = append(g.recErrs, recordError{ri, code, reason})
			nextGroup, nextRecord = gi, ri+1
		}
	}()
	add := reg.agg.Add
	for ; gi < len(g.groups); gi++ {
		gr := &g.groups[gi]
		recs := g.recs[gr.lo:gr.hi]
		if ri == 0 { // a new group
			g.recErrs = g.recErrs[:0]
			start := gr.acc
			if start == nil {
				if !g.initDone {
					g.init, g.initErr = callInit(reg.agg.Init)
					g.initDone = true
				}
				if g.initErr != nil {
					code, reason := failure(g.initErr)
					for i := range recs {
						g.recErrs = append(g.recErrs, recordError{i, code, "initial accumulator: " + reason})
					}
					g.out = g.appendAdded(g.out, nil)
					continue
				}
				start = g.init
			}
			// The first Add copies the accumulator from the input (or
			// Init's answer), which is only ever read.
			g.cur = 0
			g.accv = start
		}
		for ; ri < len(recs); ri++ {
			// work := copyAcc(g.acc[1-g.cur], g.accv), written out.
			src, work := g.accv, g.acc[1-g.cur]
			if n := len(src); n >= 8 && n <= 16 && cap(work) >= n {
				work = work[:n]
				a, z := *(*[8]byte)(src), *(*[8]byte)(src[n-8:])
				*(*[8]byte)(work) = a
				*(*[8]byte)(work[n-8:]) = z
			} else {
				work = copyAccSlow(work, src)
			}
			g.acc[1-g.cur] = work
			next, err := add(work, recs[ri])
			if err != nil {
				code, reason := failure(err)
				g.recErrs = append(g.recErrs, recordError{ri, code, reason})
				continue
			}
			g.accv = next
			g.cur = 1 - g.cur
		}
		ri = 0
		g.out = g.appendAdded(g.out, g.accv)
	}
	return gi, 0
}

// copyAcc copies src into dst's array (a new one if it is too small) and
// returns the copy. Accumulators are usually a few words: those of 8 to 16
// bytes are copied with two word moves, cheaper than a call of copy
// (runtime.memmove), which costs some 40 ns in Go compiled to Wasm. The
// loads come before the stores, so src and dst may overlap. (foldFrom has
// it written out.)
func copyAcc(dst, src []byte) []byte {
	if n := len(src); n >= 8 && n <= 16 && cap(dst) >= n {
		dst = dst[:n]
		a, z := *(*[8]byte)(src), *(*[8]byte)(src[n-8:])
		*(*[8]byte)(dst) = a
		*(*[8]byte)(dst[n-8:]) = z
		return dst
	}
	return copyAccSlow(dst, src)
}

// copyAccSlow is copyAcc for the other sizes.
func copyAccSlow(dst, src []byte) []byte {
	n := len(src)
	if cap(dst) < n {
		dst = make([]byte, n, max(n, 64))
	}
	dst = dst[:n]
	copy(dst, src)
	return dst
}

// appendAdded appends an Added: the accumulator (an empty bin for nil) and
// the records in g.recErrs. The usual answer, a short accumulator and no
// errors, is written by straight-line code.
func (g *guest) appendAdded(b, acc []byte) []byte {
	if n := len(acc); len(g.recErrs) == 0 && n <= math.MaxUint8 {
		if cap(b)-len(b) < n+4 {
			b = grow(b, n+4)
		}
		l := len(b)
		o := b[l : l+n+4]
		o[0], o[1], o[2] = 0x92, msgpack.Bin8, byte(n)
		copyAcc(o[3:3:3+n], acc)
		o[3+n] = 0x90
		return b[:l+n+4]
	}
	b = append(b, 0x92)
	b = appendNonNil(b, acc)
	b = msgpack.AppendArrayHeader(b, len(g.recErrs))
	for _, e := range g.recErrs {
		b = append(b, 0x93)
		b = msgpack.AppendInt(b, int64(e.index))
		b = msgpack.AppendInt(b, int64(e.code))
		b = msgpack.AppendStr(b, e.reason)
	}
	return b
}

// aggMerge answers eddy_agg_merge: [[key, a, b] × G] → [Result × G], body =
// the merged accumulator.
func (g *guest) aggMerge(in []byte) *callError {
	switch {
	case reg.agg == nil:
		return g.unsupported(in, "aggregate")
	case reg.agg.Merge == nil:
		n, err := g.count(in)
		if n < 0 {
			return badEnvelope(err)
		}
		b := msgpack.AppendArrayHeader(g.out[:0], n)
		g.out = failAll(b, n, codeUnsupported, "this aggregate function has no Merge")
		return nil
	}
	return g.itemsWith(in, 3, mergeStep)
}

// aggResult answers eddy_agg_result: [[key, acc] × G] → [Result × G], body =
// bytes?.
func (g *guest) aggResult(in []byte) *callError {
	switch {
	case reg.agg == nil:
		return g.unsupported(in, "aggregate")
	case reg.agg.Result == nil:
		return g.itemsWith(in, 2, identityStep)
	}
	return g.itemsWith(in, 2, resultStep)
}

// callInit runs Aggregator.Init behind a recover; a nil Init is an empty
// accumulator.
func callInit(fn func() []byte) (acc []byte, err error) {
	if fn == nil {
		return []byte{}, nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	return fn(), nil
}

// appendManifest appends the manifest (ABI.md section 4).
func appendManifest(b []byte) []byte {
	var kinds [6]string
	k := kinds[:0]
	if reg.hasProcess() {
		k = append(k, "process")
	}
	if reg.agg != nil {
		k = append(k, "aggregate")
	}
	if reg.joinFn != nil {
		k = append(k, "join")
	}
	if reg.keyFn != nil {
		k = append(k, "key")
	}
	if reg.timeFn != nil {
		k = append(k, "timestamp")
	}
	if reg.timerFn != nil {
		k = append(k, "timer")
	}
	n := 3
	if reg.name != "" {
		n++
	}
	if reg.ver != "" {
		n++
	}
	b = msgpack.AppendMapHeader(b, n)
	b = msgpack.AppendStr(b, "abi")
	b = msgpack.AppendInt(b, 1)
	b = msgpack.AppendStr(b, "kinds")
	b = msgpack.AppendArrayHeader(b, len(k))
	for _, s := range k {
		b = msgpack.AppendStr(b, s)
	}
	if reg.name != "" {
		b = msgpack.AppendStr(b, "name")
		b = msgpack.AppendStr(b, reg.name)
	}
	if reg.ver != "" {
		b = msgpack.AppendStr(b, "version")
		b = msgpack.AppendStr(b, reg.ver)
	}
	b = msgpack.AppendStr(b, "sdk")
	return msgpack.AppendStr(b, SDKVersion)
}
