package runtime

import (
	"bytes"
	"context"
	"errors"

	"github.com/eddy-streams/eddy/abi"
)

// Output collects the results of Instance.Process. Reuse one across calls:
// Reset keeps its buffers. Byte slices in Records point into Output's own
// copy of the guest's answers (or of the records a native emitted) and stay
// valid until Reset.
type Output struct {
	abi.ProcessOutput          // Records and From; its Errors are moved to Failed
	Failed            []*Error // failed input records, in input order
	arena             []byte
}

// Reset empties o for the next batch.
func (o *Output) Reset() {
	o.ProcessOutput.Reset()
	o.Failed, o.arena = o.Failed[:0], o.arena[:0]
}

// Process runs a batch of records through eddy_process (map, filter,
// flat-map). Output records are appended to out with their source index;
// records the guest refused, or on which it trapped, timed out, ran out of
// memory or produced malformed output, are appended to out.Failed and the
// rest of the batch still succeeds. The returned error is reserved for
// failures that are not about records: a cancelled context, a module that no
// longer instantiates, a function without the process kind.
func (i *Instance) Process(ctx context.Context, in []abi.Record, out *Output) error {
	if err := i.checkKind(abi.KindProcess); err != nil {
		return err
	}
	if i.nat != nil {
		return i.processNative(ctx, in, out)
	}
	try := func(lo, hi int) error {
		nr, nf, ne, na, nfail := len(out.Records), len(out.From), len(out.Errors), len(out.arena), len(out.Failed)
		err := i.processOnce(ctx, in[lo:hi], lo, out)
		if err != nil {
			clear(out.Records[nr:])
			out.Records, out.From, out.Errors, out.arena = out.Records[:nr], out.From[:nf], out.Errors[:ne], out.arena[:na]
			out.Failed = out.Failed[:nfail] // a call refused after its answer (ErrSplitCall)
		}
		return err
	}
	return bisect(0, len(in), try, func(idx int, e *Error) {
		e.Index = idx
		out.Failed = append(out.Failed, e)
	})
}

func (i *Instance) processOnce(ctx context.Context, in []abi.Record, base int, out *Output) error {
	i.enc = abi.AppendRecords(i.enc[:0], in)
	return i.answerRecords(ctx, abi.KindProcess, abi.ExportProcess, in, base, out)
}

// answerRecords calls export with the envelope in i.enc, which stands for
// in (items base.. of the batch), and appends its [ Result × N ] answer of
// records to out.
func (i *Instance) answerRecords(ctx context.Context, kind abi.Kind, export string, in []abi.Record, base int, out *Output) error {
	view, err := i.call(ctx, kind, export, i.enc)
	if err != nil {
		return err
	}
	start := len(out.arena)
	out.arena = append(out.arena, view...)
	nr, ne := len(out.From), len(out.Errors)
	if err := abi.DecodeProcessOutput(out.arena[start:], in, &out.ProcessOutput); err != nil {
		i.discard(ctx)
		return i.errorf(kind, CauseMalformed, err, "%v", err)
	}
	if n := len(out.arena) - start; n > compactMin && sparse(n, recordBytes(out.Records[nr:])) {
		// Mostly what the records do not refer to (reasons of refused
		// records, padding): bisection would otherwise keep every such
		// answer until the batch ends.
		c := compactor{buf: make([]byte, 0, recordBytes(out.Records[nr:]))}
		for j := nr; j < len(out.Records); j++ {
			c.record(&out.Records[j])
		}
		out.arena = out.arena[:start]
	}
	if base != 0 {
		for j := nr; j < len(out.From); j++ {
			out.From[j] += int32(base)
		}
	}
	for _, ie := range out.Errors[ne:] {
		out.Failed = append(out.Failed, &Error{Function: i.fn.name, Kind: kind, Cause: CauseGuest,
			Code: ie.Code, Index: base + ie.Index, Group: -1, Reason: ie.Reason})
	}
	out.Errors = out.Errors[:ne]
	// The call succeeded: its state writes take effect, those made for the
	// records it refused included (ABI.md section 3).
	return i.keepState(kind)
}

// Result is the answer for one item of a join, key, timestamp, merge or
// aggregate-result call. Err is non-nil when the item failed. Bytes is a
// copy made for the caller, who may keep it.
type Result struct {
	Bytes []byte // the body when it is bytes (nil: none)
	Int   int64  // the body when it is an int (timestamps)
	Err   *Error
}

// values runs a call whose answer is [Result × n], with bisection.
func (i *Instance) values(ctx context.Context, kind abi.Kind, export string, n int, t abi.BodyType,
	encode func(dst []byte, lo, hi int) []byte, out []Result) ([]Result, error) {
	if err := i.checkKind(kind); err != nil {
		return out, err
	}
	base := len(out)
	out = append(out, make([]Result, n)...)
	var scratch []abi.Value
	try := func(lo, hi int) error {
		i.enc = encode(i.enc[:0], lo, hi)
		view, err := i.call(ctx, kind, export, i.enc)
		if err != nil {
			return err
		}
		owned := append([]byte(nil), view...)
		scratch, err = abi.DecodeValues(owned, hi-lo, t, scratch[:0])
		if err != nil {
			i.discard(ctx)
			return i.errorf(kind, CauseMalformed, err, "%v", err)
		}
		if len(owned) > compactMin {
			compactValues(len(owned), scratch)
		}
		for j, v := range scratch {
			r := &out[base+lo+j]
			if v.Code != abi.CodeOK {
				r.Err = &Error{Function: i.fn.name, Kind: kind, Cause: CauseGuest, Code: v.Code, Index: lo + j, Group: -1, Reason: v.Reason}
				continue
			}
			r.Bytes, r.Int = v.Bytes, v.Int
		}
		return i.keepState(kind)
	}
	err := bisect(0, n, try, func(idx int, e *Error) {
		e.Index = idx
		out[base+idx] = Result{Err: e}
	})
	return out, err
}

// Join combines left and right values by key (eddy_join). Results are appended
// to out, one per item; a nil Bytes means the joiner emitted nothing.
func (i *Instance) Join(ctx context.Context, keys, left, right [][]byte, out []Result) ([]Result, error) {
	if n := i.nat; n != nil {
		return i.valuesNative(ctx, abi.KindJoin, len(keys), abi.BodyBytes, func(j int) ([]byte, int64, error) {
			b, err := n.Join(keys[j], left[j], right[j])
			return b, 0, err
		}, out)
	}
	return i.values(ctx, abi.KindJoin, abi.ExportJoin, len(keys), abi.BodyBytes, func(dst []byte, lo, hi int) []byte {
		return abi.AppendTriples(dst, hi-lo, func(j int) ([]byte, []byte, []byte) { return keys[lo+j], left[lo+j], right[lo+j] })
	}, out)
}

// Key extracts a new key per record (eddy_key).
func (i *Instance) Key(ctx context.Context, in []abi.Record, out []Result) ([]Result, error) {
	if n := i.nat; n != nil {
		return i.valuesNative(ctx, abi.KindKey, len(in), abi.BodyBytes, func(j int) ([]byte, int64, error) {
			b, err := n.Key(&in[j])
			return b, 0, err
		}, out)
	}
	return i.values(ctx, abi.KindKey, abi.ExportKey, len(in), abi.BodyBytes, func(dst []byte, lo, hi int) []byte {
		return abi.AppendRecords(dst, in[lo:hi])
	}, out)
}

// Timestamp extracts an event time (ms) per record (eddy_timestamp).
func (i *Instance) Timestamp(ctx context.Context, in []abi.Record, out []Result) ([]Result, error) {
	if n := i.nat; n != nil {
		return i.valuesNative(ctx, abi.KindTimestamp, len(in), abi.BodyInt, func(j int) ([]byte, int64, error) {
			ts, err := n.Timestamp(&in[j])
			return nil, ts, err
		}, out)
	}
	return i.values(ctx, abi.KindTimestamp, abi.ExportTimestamp, len(in), abi.BodyInt, func(dst []byte, lo, hi int) []byte {
		return abi.AppendRecords(dst, in[lo:hi])
	}, out)
}

// AggMerge merges pairs of accumulators of the same key (eddy_agg_merge).
func (i *Instance) AggMerge(ctx context.Context, keys, a, b [][]byte, out []Result) ([]Result, error) {
	if n := i.nat; n != nil {
		return i.valuesNative(ctx, abi.KindAggregate, len(keys), abi.BodyNonNil, func(j int) ([]byte, int64, error) {
			m, err := n.AggMerge(keys[j], a[j], b[j])
			return m, 0, err
		}, out)
	}
	return i.values(ctx, abi.KindAggregate, abi.ExportAggMerge, len(keys), abi.BodyNonNil, func(dst []byte, lo, hi int) []byte {
		return abi.AppendTriples(dst, hi-lo, func(j int) ([]byte, []byte, []byte) { return keys[lo+j], a[lo+j], b[lo+j] })
	}, out)
}

// AggResult turns accumulators into output values (eddy_agg_result); a nil
// Bytes means emit nothing.
func (i *Instance) AggResult(ctx context.Context, keys, accs [][]byte, out []Result) ([]Result, error) {
	if n := i.nat; n != nil {
		return i.valuesNative(ctx, abi.KindAggregate, len(keys), abi.BodyBytes, func(j int) ([]byte, int64, error) {
			r, err := n.AggResult(keys[j], accs[j])
			return r, 0, err
		}, out)
	}
	return i.values(ctx, abi.KindAggregate, abi.ExportAggResult, len(keys), abi.BodyBytes, func(dst []byte, lo, hi int) []byte {
		return abi.AppendPairs(dst, hi-lo, func(j int) ([]byte, []byte) { return keys[lo+j], accs[lo+j] })
	}, out)
}

// AggInit returns the initial accumulator (eddy_agg_init), cached per
// instance. The caller must not modify it.
func (i *Instance) AggInit(ctx context.Context) ([]byte, error) {
	if err := i.checkKind(abi.KindAggregate); err != nil {
		return nil, err
	}
	if i.nat != nil {
		return i.aggInitNative(ctx)
	}
	if i.aggInit != nil && i.mod != nil {
		return i.aggInit, nil
	}
	view, err := i.call(ctx, abi.KindAggregate, abi.ExportAggInit, nil)
	if err != nil {
		return nil, err
	}
	v, err := abi.DecodeValue(append([]byte(nil), view...), abi.BodyNonNil)
	if err != nil {
		i.discard(ctx)
		return nil, i.errorf(abi.KindAggregate, CauseMalformed, err, "%v", err)
	}
	if v.Code != abi.CodeOK {
		return nil, &Error{Function: i.fn.name, Kind: abi.KindAggregate, Cause: CauseGuest, Code: v.Code, Index: -1, Group: -1, Reason: "init: " + v.Reason}
	}
	if err := i.keepState(abi.KindAggregate); err != nil {
		return nil, err
	}
	if sparse(len(view), len(v.Bytes)) {
		v.Bytes = bytes.Clone(v.Bytes) // the instance keeps it
	}
	i.aggInit = v.Bytes
	return v.Bytes, nil
}

// AggAdd folds each group's records into its accumulator (eddy_agg_add) and
// appends one Added per group to out, in order. Records the guest refused, or
// on which the call failed as a whole (isolated by bisection, groups first and
// then records within a group, carrying the accumulator across the halves),
// are appended to failed with Group and Index set; they are not folded. An
// Added.Acc is nil only when no record of a group that came with a nil
// accumulator could be folded.
func (i *Instance) AggAdd(ctx context.Context, groups []abi.Group, out []abi.Added, failed []*Error) ([]abi.Added, []*Error, error) {
	if err := i.checkKind(abi.KindAggregate); err != nil {
		return out, failed, err
	}
	if i.nat != nil {
		return i.aggAddNative(ctx, groups, out, failed)
	}
	base := len(out)
	out = append(out, make([]abi.Added, len(groups))...)
	var scratch []abi.Added
	// addRange folds whole groups [lo, hi).
	addRange := func(lo, hi int) error {
		i.enc = abi.AppendAggAddInput(i.enc[:0], groups[lo:hi])
		view, err := i.call(ctx, abi.KindAggregate, abi.ExportAggAdd, i.enc)
		if err != nil {
			return err
		}
		scratch, err = abi.DecodeAggAddOutput(append([]byte(nil), view...), groups[lo:hi], scratch[:0])
		if err != nil {
			i.discard(ctx)
			return i.errorf(abi.KindAggregate, CauseMalformed, err, "%v", err)
		}
		compactAdded(len(view), scratch)
		for j, a := range scratch {
			out[base+lo+j] = abi.Added{Acc: a.Acc}
			for _, ie := range a.Errors {
				failed = append(failed, i.addError(lo+j, ie.Index, ie))
			}
		}
		return i.keepState(abi.KindAggregate)
	}
	var stop error
	err := bisect(0, len(groups), addRange, func(g int, e *Error) {
		// One group failed as a whole: fold its records in halves, carrying
		// the accumulator from the first half to the second.
		grp, acc := groups[g], groups[g].Acc
		n := len(grp.Records)
		if n <= 1 {
			e.Group, e.Index = g, min(0, n-1)
			failed = append(failed, e)
			out[base+g] = abi.Added{Acc: acc}
			return
		}
		for _, r := range [][2]int{{0, n / 2}, {n / 2, n}} {
			if acc, stop = i.addRecords(ctx, g, grp, r[0], r[1], acc, &failed); stop != nil {
				return
			}
		}
		out[base+g] = abi.Added{Acc: acc}
	})
	if err == nil {
		err = stop
	}
	return out, failed, err
}

func (i *Instance) addError(g, idx int, ie abi.ItemError) *Error {
	return &Error{Function: i.fn.name, Kind: abi.KindAggregate, Cause: CauseGuest, Code: ie.Code, Index: idx, Group: g, Reason: ie.Reason}
}

// addRecords folds records [lo, hi) of group g onto acc, bisecting on
// call-level failure, and returns the resulting accumulator.
func (i *Instance) addRecords(ctx context.Context, g int, grp abi.Group, lo, hi int, acc []byte, failed *[]*Error) ([]byte, error) {
	if hi == lo {
		return acc, nil
	}
	one := []abi.Group{{Key: grp.Key, Acc: acc, Records: grp.Records[lo:hi]}}
	i.enc = abi.AppendAggAddInput(i.enc[:0], one)
	view, err := i.call(ctx, abi.KindAggregate, abi.ExportAggAdd, i.enc)
	var added []abi.Added
	if err == nil {
		added, err = abi.DecodeAggAddOutput(append([]byte(nil), view...), one, nil)
		if err != nil {
			i.discard(ctx)
			err = i.errorf(abi.KindAggregate, CauseMalformed, err, "%v", err)
		} else {
			compactAdded(len(view), added)
		}
	}
	if err == nil {
		if err := i.keepState(abi.KindAggregate); err != nil {
			return nil, err
		}
		for _, ie := range added[0].Errors {
			*failed = append(*failed, i.addError(g, lo+ie.Index, ie))
		}
		return added[0].Acc, nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return nil, err
	}
	if hi-lo == 1 {
		e.Group, e.Index = g, lo
		*failed = append(*failed, e)
		return acc, nil
	}
	mid := lo + (hi-lo)/2
	acc, err = i.addRecords(ctx, g, grp, lo, mid, acc, failed)
	if err != nil {
		return nil, err
	}
	return i.addRecords(ctx, g, grp, mid, hi, acc, failed)
}

// compactMin is the size of an answer whose copy is kept whole, whatever
// its decoded values refer to.
const compactMin = 64 << 10

// sparse reports whether the copy of an answer of n bytes, of which its
// decoded values refer to used, should not be kept for them: a guest can
// answer mostly with what the host cuts or drops (a 60 MB reason is kept
// as 4 KiB), and bisection makes one answer per record of a batch.
func sparse(n, used int) bool { return n > compactMin && n > 2*used }

// recordBytes is the count of answer bytes recs refer to.
func recordBytes(recs []abi.Record) int {
	n := 0
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value)
		for _, h := range recs[i].Headers {
			n += len(h.Value)
		}
	}
	return n
}

// compactValues copies the bodies of a values answer of n bytes into a
// buffer of their own when the answer is sparse.
func compactValues(n int, vs []abi.Value) {
	used := 0
	for _, v := range vs {
		used += len(v.Bytes)
	}
	if !sparse(n, used) {
		return
	}
	c := compactor{buf: make([]byte, 0, used)}
	for j := range vs {
		vs[j].Bytes = c.own(vs[j].Bytes)
	}
}

// compactAdded copies the accumulators of an aggregate add's answer of n
// bytes into a buffer of their own when the answer is sparse.
func compactAdded(n int, added []abi.Added) {
	if n <= compactMin {
		return
	}
	used := 0
	for _, a := range added {
		used += len(a.Acc)
	}
	if !sparse(n, used) {
		return
	}
	c := compactor{buf: make([]byte, 0, used)}
	for j := range added {
		added[j].Acc = c.own(added[j].Acc)
	}
}

// compactor copies byte slices into one buffer, made with the capacity
// they need, so that the copies never move.
type compactor struct{ buf []byte }

// own returns b's copy: nil for nil, empty (not nil) for empty.
func (c *compactor) own(b []byte) []byte {
	if b == nil {
		return nil
	}
	s := len(c.buf)
	c.buf = append(c.buf, b...)
	return c.buf[s:len(c.buf):len(c.buf)]
}

// record makes rec's bytes its copies.
func (c *compactor) record(rec *abi.Record) {
	rec.Key, rec.Value = c.own(rec.Key), c.own(rec.Value)
	for j := range rec.Headers {
		rec.Headers[j].Value = c.own(rec.Headers[j].Value)
	}
}
