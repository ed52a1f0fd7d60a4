package eddy

import (
	"encoding/binary"
	"math"
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
	names map[string]string

	// Aggregation: the groups of an eddy_agg_add call, the two scratch
	// accumulators, which one holds the current value, and the records of
	// the current group that were not folded.
	groups  []group
	acc     [2][]byte
	accv    []byte
	cur     int
	recErrs []recordError
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
func (g *guest) aggAdd(in []byte) *callError {
	n, err := g.count(in)
	if n < 0 {
		return badEnvelope(err)
	}
	if cap(g.groups) < n {
		g.groups = make([]group, n)
	}
	g.groups = g.groups[:n]
	g.recs = g.recs[:0]
	g.hdrs = g.hdrs[:0]
	r := &g.r
	for i := range g.groups {
		gr := &g.groups[i]
		if m := r.ArrayLen(); m != 3 {
			r.Fail(errItemShape)
		}
		gr.key, gr.acc = r.Bytes(), r.Bytes()
		k := r.ArrayLen()
		gr.lo = len(g.recs)
		for j := 0; j < k && r.Err() == nil; j++ {
			g.recs = append(g.recs, Record{})
			g.readRecord(&g.recs[len(g.recs)-1])
		}
		gr.hi = len(g.recs)
		if r.Err() != nil {
			return badEnvelope(envelopeError("group", i, r.Err()))
		}
	}
	if err := g.trailing(); err != nil {
		return badEnvelope(err)
	}

	b := msgpack.AppendArrayHeader(g.out[:0], n)
	for i := range g.groups {
		acc := g.fold(&g.groups[i])
		b = append(b, 0x92)
		b = appendNonNil(b, acc)
		b = msgpack.AppendArrayHeader(b, len(g.recErrs))
		for _, e := range g.recErrs {
			b = append(b, 0x93)
			b = msgpack.AppendInt(b, int64(e.index))
			b = msgpack.AppendInt(b, int64(e.code))
			b = msgpack.AppendStr(b, e.reason)
		}
	}
	g.out = b
	return nil
}

// fold folds the records of gr into its accumulator and returns it, leaving
// the records it could not fold in g.recErrs.
//
// Add gets a scratch copy of the accumulator, so it may change it in place;
// two scratch buffers alternate so that a failed Add leaves the previous
// accumulator intact, and the input envelope is never written.
func (g *guest) fold(gr *group) []byte {
	g.recErrs = g.recErrs[:0]
	recs := g.recs[gr.lo:gr.hi]
	if reg.agg == nil {
		for i := range recs {
			g.recErrs = append(g.recErrs, recordError{i, codeUnsupported, "this module implements no aggregate function"})
		}
		return gr.acc
	}
	start := gr.acc
	if start == nil {
		var err error
		if start, err = callInit(reg.agg.Init); err != nil {
			code, reason := failure(err)
			for i := range recs {
				g.recErrs = append(g.recErrs, recordError{i, code, "initial accumulator: " + reason})
			}
			return nil
		}
	}
	if g.acc[0] == nil {
		g.acc[0], g.acc[1] = make([]byte, 0, 64), make([]byte, 0, 64)
	}
	g.cur = 0
	g.accv = append(g.acc[0][:0], start...)
	g.acc[0] = g.accv
	for i := 0; i < len(recs); {
		i = g.foldFrom(recs, i)
	}
	return g.accv
}

// foldFrom folds recs from i on until the end or a panic, and returns the
// index of the next record to fold.
func (g *guest) foldFrom(recs []Record, i int) (next int) {
	defer func() {
		if v := recover(); v != nil {
			code, reason := failure(panicError(v))
			g.recErrs = append(g.recErrs, recordError{i, code, reason})
			next = i + 1
		}
	}()
	add := reg.agg.Add
	for ; i < len(recs); i++ {
		work := append(g.acc[1-g.cur][:0], g.accv...)
		g.acc[1-g.cur] = work
		next, err := add(work, recs[i])
		if err != nil {
			code, reason := failure(err)
			g.recErrs = append(g.recErrs, recordError{i, code, reason})
			continue
		}
		g.accv = next
		g.cur = 1 - g.cur
	}
	return i
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
	var kinds [5]string
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
