package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/msgfield"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// A join step in a task. A stream-table join looks stream records up in its
// table: a co-partitioned table's store, fed by the table topic's partition
// of the task (the topic is its own changelog: the store is restored from
// it and its checkpoint is the offset reached), or a global table shared by
// the node. A stream-stream join buffers both sides in the step's store
// (with a changelog, like any state) and pairs them within the join window.
// Each pair goes through the step's function (eddy_join), or without one
// becomes {"left": <left value>, "right": <right value>} (Node.nest).
type taskJoin struct {
	table *join.TableJoin
	win   *join.WindowJoin
	out   join.Output
	// origin[i] is the index in the batch of the record that produced
	// out.Pairs[i].
	origin []int32
}

// storeTable is a join.Table on a state store.
type storeTable struct{ st *state.Store }

func (s storeTable) Get(key []byte) ([]byte, bool, error) { return s.st.Get(key) }
func (s storeTable) Put(key, value []byte) error          { return s.st.Put(key, value) }
func (s storeTable) Delete(key []byte) error              { return s.st.Delete(key) }

// storeBuffer is a join.Buffer on a state store: each entry under
// join.AppendBufferKey, its value a matched flag byte and the encoded
// record. An in-memory index of the entries of each (side, key), in (t,
// seq) order, spares a store scan per lookup; Walk (the join's Restore)
// builds it from the store.
type storeBuffer struct {
	st    *state.Store
	index map[string][]bufRef // side byte + key → entries in (t, seq) order
	// skip, when set, is given the corrupt entries Walk meets (without it
	// they are an error).
	skip func(k []byte, err error) error
}

type bufRef struct {
	t   int64
	seq uint64
}

func newStoreBuffer(st *state.Store) *storeBuffer {
	return &storeBuffer{st: st, index: map[string][]bufRef{}}
}

func indexKey(side join.Side, key []byte) string { return string(append([]byte{byte(side)}, key...)) }

func (r bufRef) less(o bufRef) bool { return r.t < o.t || r.t == o.t && r.seq < o.seq }

func (b *storeBuffer) Put(side join.Side, key []byte, t int64, seq uint64, rec []byte, matched bool) error {
	v := make([]byte, 1, 1+len(rec))
	if matched {
		v[0] = 1
	}
	if err := b.st.Put(join.AppendBufferKey(nil, side, key, t, seq), append(v, rec...)); err != nil {
		return err
	}
	b.add(indexKey(side, key), bufRef{t, seq})
	return nil
}

func (b *storeBuffer) add(k string, r bufRef) {
	refs := b.index[k]
	i := sort.Search(len(refs), func(i int) bool { return !refs[i].less(r) })
	if i < len(refs) && refs[i] == r {
		return
	}
	refs = append(refs, bufRef{})
	copy(refs[i+1:], refs[i:])
	refs[i] = r
	b.index[k] = refs
}

func (b *storeBuffer) Scan(side join.Side, key []byte, from, to int64, fn func(t int64, seq uint64, rec []byte, matched bool) error) error {
	refs := b.index[indexKey(side, key)]
	i := sort.Search(len(refs), func(i int) bool { return refs[i].t >= from })
	// fn may change the buffer (SetMatched, not Put or Delete): iterate a
	// copy of the range.
	var sel []bufRef
	for ; i < len(refs) && refs[i].t <= to; i++ {
		sel = append(sel, refs[i])
	}
	for _, r := range sel {
		v, ok, err := b.st.Get(join.AppendBufferKey(nil, side, key, r.t, r.seq))
		if err != nil {
			return err
		}
		if !ok || len(v) == 0 {
			return fmt.Errorf("%w: buffer entry %s %s %d/%d indexed but not stored", join.ErrCorrupt, side, brief(key), r.t, r.seq)
		}
		if err := fn(r.t, r.seq, v[1:], v[0] == 1); err != nil {
			return err
		}
	}
	return nil
}

func (b *storeBuffer) SetMatched(side join.Side, key []byte, t int64, seq uint64) error {
	k := join.AppendBufferKey(nil, side, key, t, seq)
	v, ok, err := b.st.Get(k)
	if err != nil || !ok || len(v) == 0 {
		return err
	}
	v[0] = 1
	return b.st.Put(k, v)
}

func (b *storeBuffer) Delete(side join.Side, key []byte, t int64, seq uint64) error {
	if err := b.st.Delete(join.AppendBufferKey(nil, side, key, t, seq)); err != nil {
		return err
	}
	k := indexKey(side, key)
	refs := b.index[k]
	r := bufRef{t, seq}
	i := sort.Search(len(refs), func(i int) bool { return !refs[i].less(r) })
	if i < len(refs) && refs[i] == r {
		refs = append(refs[:i], refs[i+1:]...)
	}
	if len(refs) == 0 {
		delete(b.index, k)
	} else {
		b.index[k] = refs
	}
	return nil
}

// Walk implements join.Buffer.Walk. An entry that does not decode (its
// key, its flag byte or its record) is given to b.skip and left out of the
// index, so that the join never reads it (see corrupt.go).
func (b *storeBuffer) Walk(fn func(side join.Side, key []byte, t int64, seq uint64) error) error {
	type entry struct {
		side join.Side
		key  []byte
		t    int64
		seq  uint64
	}
	var es []entry
	var rec abi.Record
	err := b.st.Scan(nil, func(k, v []byte) error {
		if len(k) > 0 && k[0] == watermarkKey[0] { // the watermark and input times
			return nil
		}
		side, key, t, seq, err := join.ParseBufferKey(k)
		if err == nil {
			err = checkBufferValue(v, &rec)
		}
		if err == nil && seq == math.MaxUint64 {
			// Sequence numbers continue after the largest: this one would
			// start them over.
			err = fmt.Errorf("buffer entry with sequence number %d: %w", seq, join.ErrCorrupt)
		}
		if err != nil {
			if b.skip == nil {
				return err
			}
			return b.skip(k, err)
		}
		es = append(es, entry{side, bytes.Clone(key), t, seq})
		return nil
	})
	if err != nil {
		return err
	}
	clear(b.index)
	for _, e := range es {
		b.add(indexKey(e.side, e.key), bufRef{e.t, e.seq})
		if err := fn(e.side, e.key, e.t, e.seq); err != nil {
			return err
		}
	}
	return nil
}

// checkBufferValue checks a buffer entry's value: the matched flag (0 or
// 1), then a record encoded by join.AppendRecord. rec is scratch.
func checkBufferValue(v []byte, rec *abi.Record) error {
	if len(v) == 0 || v[0] > 1 {
		return fmt.Errorf("buffer entry value: no matched flag: %w", join.ErrCorrupt)
	}
	return join.DecodeRecord(v[1:], rec)
}

func joinType(t JoinType) join.Type {
	switch t {
	case JoinLeft:
		return join.LeftJoin
	case JoinOuter:
		return join.OuterJoin
	}
	return join.InnerJoin
}

// initJoin sets up join step i of the task: its table's store (restored
// from the table topic) or its buffer (restored from its changelog).
func (t *task) initJoin(ctx context.Context, i int) error {
	n := t.n
	step := n.p.Steps[i]
	tj := &taskJoin{}
	if step.Table != "" {
		tab := n.p.Table(step.Table)
		var table join.Table
		if tab.Global {
			table = n.globals[tab.Name]
		} else {
			// Restored when the group has said where the table's
			// partition starts (adjustOffsets), which is where the store
			// must stop; after an aborted transaction (rebuildTasks) it
			// is already there.
			ts := &taskStore{st: n.db.Store(n.p.Name, tableStore(tab.Name), t.part), topic: tab.Topic, source: true}
			ts.st.Abort()
			t.stores[i] = ts
			table = storeTable{ts.st}
		}
		var err error
		if tj.table, err = join.NewTableJoin(joinType(step.Type), table); err != nil {
			return err
		}
		t.joins[i] = tj
		return nil
	}
	ts := &taskStore{st: n.db.Store(n.p.Name, step.Name, t.part), topic: ChangelogTopic(n.p.Name, step.Name)}
	ts.st.Abort()
	if err := n.restore(ctx, ts, t.part); err != nil {
		return fmt.Errorf("restore %s: %w", ts.topic, err)
	}
	t.stores[i] = ts
	w := step.Window
	sk := n.skipper(i, ts.topic, t.part)
	defer sk.done()
	buf := newStoreBuffer(ts.st)
	buf.skip = sk.bad
	var err error
	tj.win, err = join.NewWindowJoin(join.Config{Type: joinType(step.Type), Before: w.Before, After: w.After, Grace: w.Grace,
		Disorder: w.Disorder, IdleTimeout: w.IdleTimeout}, buf)
	if err != nil {
		return err
	}
	var inputs []int32
	for k, in := range t.stage.Inputs {
		if s, side := t.stage.Sides[in]; !side || s == i {
			inputs = append(inputs, int32(k))
		}
	}
	tj.win.Assign(inputs...)
	wm, err := loadWatermark(ts.st, sk.bad)
	if err != nil {
		return err
	}
	if err := tj.win.Restore(wm); err != nil {
		return err
	}
	// Expiry already went as far as the saved watermark: giving the
	// inputs their times back emits nothing.
	valid := func(in int32) bool { return slices.Contains(inputs, in) }
	if err := restoreInputTimes(ts.st, valid, sk.bad, func(in int32, at int64) error { return skipBadTime(tj.win.Progress(in, at, &tj.out)) }); err != nil {
		return err
	}
	tj.out.Reset()
	t.joins[i] = tj
	return nil
}

// inputOf is the index of a topic among the stage's inputs: a join's input
// id.
func (t *task) inputOf(topic string) int32 {
	for k, in := range t.stage.Inputs {
		if in == topic {
			return int32(k)
		}
	}
	return 0
}

// updateTable applies a batch of the table topic of join step s.
func (t *task) updateTable(b *batch, s int) error {
	tj := t.joins[s]
	for _, r := range b.records {
		a := toABI(r)
		if len(a.Key) > maxRecordKey || len(a.Value) > state.MaxValue {
			// The store cannot hold it (state.ErrTooLarge would stop the
			// task, on every restart): the table keeps the key's previous
			// value.
			t.n.log.Warn("table record over the state limits skipped", "table", t.n.p.Steps[s].Table,
				"partition", r.Partition, "offset", r.Offset, "key_bytes", len(a.Key), "value_bytes", len(a.Value),
				"max_key_bytes", maxRecordKey, "max_value_bytes", state.MaxValue)
			continue
		}
		if err := tj.table.Update(&a); err != nil {
			return fmt.Errorf("table %s: %w", t.n.p.Steps[s].Table, err)
		}
	}
	t.stores[s].next = b.last.Offset + 1
	return nil
}

// joinStep runs join step s over cur, records of the given side, and
// returns the joined records.
func (t *task) joinStep(ctx context.Context, b *batch, s int, side join.Side, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	n := t.n
	tj := t.joins[s]
	tj.out.Reset()
	tj.origin = tj.origin[:0]
	input := t.inputOf(b.records[0].Topic)
	cur, src = t.refuseOversized(ctx, b, s, abi.KindJoin, cur, src)
	for j := range cur {
		lates := len(tj.out.Late)
		if tj.win != nil {
			// A record the buffer keeps must fit its changelog: stored, it
			// would fail the changelog produce at the commit, which no
			// record can be charged with. It is refused before it joins.
			cl := t.stores[s].topic
			if size, limit := joinBufferSize(&cur[j]), n.recordLimit(cl); size > limit {
				t.deadLetter(ctx, b, b.records[src[j]], s, t.tooLargeError(s,
					fmt.Sprintf("join buffer entry of %d bytes exceeds the %d-byte limit of topic %s", size, limit, cl)))
				continue
			}
		}
		var err error
		if tj.table != nil {
			err = tj.table.Lookup(&cur[j], &tj.out)
		} else {
			err = tj.win.Process(side, input, &cur[j], &tj.out)
		}
		if errors.Is(err, windowing.ErrNoTimestamp) {
			t.deadLetter(ctx, b, b.records[src[j]], s, &runtime.Error{Function: n.p.Steps[s].Name, Kind: abi.KindTimestamp,
				Cause: runtime.CauseGuest, Code: abi.CodeBadInput, Index: j, Group: -1, Reason: err.Error()})
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for len(tj.origin) < len(tj.out.Pairs) {
			tj.origin = append(tj.origin, src[j])
		}
		for _, l := range tj.out.Late[lates:] {
			t.joinLate(ctx, b, s, b.records[src[j]], l)
		}
	}
	if tj.win != nil {
		if err := tj.win.Advance(&tj.out); err != nil {
			return nil, nil, err
		}
		// Unmatched records whose window closed are charged to the batch
		// that moved the watermark.
		for len(tj.origin) < len(tj.out.Pairs) {
			tj.origin = append(tj.origin, int32(len(b.records)-1))
		}
	}
	return t.joined(ctx, b, s, tj)
}

// joined turns a join's pairs into records: through the step's function, or
// nesting both values.
func (t *task) joined(ctx context.Context, b *batch, s int, tj *taskJoin) ([]abi.Record, []int32, error) {
	pairs := tj.out.Pairs
	next := make([]abi.Record, 0, len(pairs))
	nsrc := make([]int32, 0, len(pairs))
	inst := t.inst(s)
	if inst == nil {
		for i, p := range pairs {
			next = append(next, abi.Record{Key: p.Key, Value: t.n.nest(p.Left, p.Right), Timestamp: p.Time})
			nsrc = append(nsrc, tj.origin[i])
		}
		return next, nsrc, nil
	}
	keys := make([][]byte, len(pairs))
	lefts := make([][]byte, len(pairs))
	rights := make([][]byte, len(pairs))
	for i, p := range pairs {
		keys[i] = p.Key
		if p.Left != nil {
			lefts[i] = p.Left.Value
		}
		if p.Right != nil {
			rights[i] = p.Right.Value
		}
	}
	res, err := inst.Join(ctx, keys, lefts, rights, t.results[:0])
	t.results = res
	if err != nil {
		return nil, nil, fmt.Errorf("step %s: %w", t.n.p.Steps[s].Name, err)
	}
	for i, p := range pairs {
		if e := res[i].Err; e != nil {
			t.deadLetter(ctx, b, b.records[tj.origin[i]], s, e)
			continue
		}
		if res[i].Bytes == nil {
			continue // the joiner emitted nothing
		}
		next = append(next, abi.Record{Key: p.Key, Value: res[i].Bytes, Timestamp: p.Time})
		nsrc = append(nsrc, tj.origin[i])
	}
	return next, nsrc, nil
}

// joinBufferSize is an upper bound of the changelog record of rec's entry
// in a join buffer (storeBuffer.Put): the buffer key (side, key, time,
// sequence) and the flag byte and join.AppendRecord's encoding of rec, with
// every varint at its largest, plus produceSize's framing.
func joinBufferSize(rec *abi.Record) int {
	const varint = binary.MaxVarintLen64
	n := produceSize(&kgo.Record{}) + 1 + varint + len(rec.Key) + 16 // the key
	n += 2 + varint + 2*varint + len(rec.Key) + len(rec.Value) + varint
	for _, h := range rec.Headers {
		n += 2*varint + len(h.Key) + len(h.Value)
	}
	return n
}

// nest is the default join output, {"left": L, "right": R}, in the
// pipeline's record format: nestJSON, or nestMsgpack in a msgpack pipeline.
func (n *Node) nest(l, r *abi.Record) []byte {
	if n.p.Source.ValueFormat() == pipeline.FormatMsgpack {
		return nestMsgpack(l, r)
	}
	return nestJSON(l, r)
}

// nestMsgpack is the default join output of MessagePack values: a map
// {"left": L, "right": R}, each side its value embedded as it is, binary
// if it is not one MessagePack value (msgfield.Valid), nil when missing.
func nestMsgpack(l, r *abi.Record) []byte {
	var buf bytes.Buffer
	e := msgpack.GetEncoder()
	defer msgpack.PutEncoder(e)
	e.Reset(&buf)
	// Writing to a bytes.Buffer does not fail.
	e.EncodeMapLen(2)
	for _, side := range []struct {
		name string
		rec  *abi.Record
	}{{"left", l}, {"right", r}} {
		e.EncodeString(side.name)
		switch {
		case side.rec == nil || side.rec.Value == nil:
			e.EncodeNil()
		case msgfield.Valid(side.rec.Value):
			buf.Write(side.rec.Value)
		default:
			e.EncodeBytes(side.rec.Value)
		}
	}
	return buf.Bytes()
}

// nestJSON is the default join output of JSON values: {"left": L,
// "right": R}, each side its JSON value, a string if it is other text,
// base64 in "left_b64" if it is not UTF-8, null when missing.
func nestJSON(l, r *abi.Record) []byte {
	b := []byte(`{`)
	side := func(name string, rec *abi.Record) {
		switch {
		case rec == nil || rec.Value == nil:
			b = append(b, `"`+name+`":null`...)
		case json.Valid(rec.Value):
			b = append(append(b, `"`+name+`":`...), bytes.TrimSpace(rec.Value)...)
		case utf8.Valid(rec.Value):
			s, _ := json.Marshal(string(rec.Value))
			b = append(append(b, `"`+name+`":`...), s...)
		default:
			s, _ := json.Marshal(rec.Value) // base64
			b = append(append(b, `"`+name+`_b64":`...), s...)
		}
	}
	side("left", l)
	b = append(b, ',')
	side("right", r)
	return append(b, '}')
}

// joinLate sends a record later than its join window's grace to the late
// topic.
func (t *task) joinLate(ctx context.Context, b *batch, s int, orig *kgo.Record, l join.Late) {
	n := t.n
	n.stats.late.Add(1)
	r := &kgo.Record{Topic: n.p.Late.Topic, Key: orig.Key, Value: orig.Value, Timestamp: orig.Timestamp,
		Headers: append(append([]kgo.RecordHeader(nil), orig.Headers...),
			kgo.RecordHeader{Key: "eddy.join.side", Value: []byte(l.Side.String())},
			kgo.RecordHeader{Key: "eddy.watermark", Value: strconv.AppendInt(nil, l.Watermark, 10)},
			kgo.RecordHeader{Key: "eddy.event.time", Value: strconv.AppendInt(nil, l.Time, 10)},
			kgo.RecordHeader{Key: HeaderSourceTopic, Value: []byte(orig.Topic)},
			kgo.RecordHeader{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(int(orig.Partition)))},
			kgo.RecordHeader{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(orig.Offset, 10))},
		)}
	t.produceLate(ctx, b, r, orig, s)
}

// saveJoinWatermarks records each windowed join's watermark and input
// times in its store.
func (t *task) saveJoinWatermarks() error {
	for s, tj := range t.joins {
		if tj == nil || tj.win == nil {
			continue
		}
		st := t.stores[s].st
		if err := st.Put(watermarkKey, binary.BigEndian.AppendUint64(nil, uint64(tj.win.Watermark()))); err != nil {
			return err
		}
		if err := saveInputTimes(st, tj.win.InputTimes()); err != nil {
			return err
		}
	}
	return nil
}

// Input times live beside the watermark: "w" + the input id (4 bytes) →
// the largest event time seen on that input (8 bytes). A task with several
// inputs (a join's two sides, the upstream partitions of a repartition)
// gives them back after a restart: the saved watermark alone would leave an
// input that receives nothing more holding the watermark back.
func inputTimeKey(in int32) []byte {
	return binary.BigEndian.AppendUint32(bytes.Clone(watermarkKey), uint32(in))
}

func saveInputTimes(st *state.Store, times map[int32]int64) error {
	for in, at := range times {
		k := inputTimeKey(in)
		v := binary.BigEndian.AppendUint64(nil, uint64(at))
		if old, ok, err := st.Get(k); err != nil {
			return err
		} else if ok && bytes.Equal(old, v) {
			continue
		}
		if err := st.Put(k, v); err != nil {
			return err
		}
	}
	return nil
}

// restoreInputTimes gives give the input times saved in st. An entry that
// does not decode, or names an input that valid refuses (a task's inputs
// are known: an input that is not one of them would hold the watermark
// back forever), goes to bad instead.
func restoreInputTimes(st *state.Store, valid func(in int32) bool, bad func(k []byte, err error) error,
	give func(in int32, at int64) error) error {
	type it struct {
		in int32
		at int64
	}
	var its []it
	err := st.Scan(watermarkKey, func(k, v []byte) error {
		if bytes.Equal(k, watermarkKey) {
			return nil // the watermark itself
		}
		in, at, err := parseInputTime(k, v)
		if err == nil && !valid(in) {
			err = fmt.Errorf("input time of input %d, not one of the task's: %w", in, errCorruptEntry)
		}
		if err != nil {
			return bad(k, err)
		}
		its = append(its, it{in, at})
		return nil
	})
	if err != nil {
		return err
	}
	for _, x := range its {
		if err := give(x.in, x.at); err != nil {
			return err
		}
	}
	return nil
}

// parseInputTime parses an input time entry (see inputTimeKey).
func parseInputTime(k, v []byte) (in int32, at int64, err error) {
	if len(k) != len(watermarkKey)+4 || !bytes.HasPrefix(k, watermarkKey) || len(v) != 8 {
		return 0, 0, fmt.Errorf("input time entry of %d+%d bytes, want %d+8: %w", len(k), len(v), len(watermarkKey)+4, errCorruptEntry)
	}
	return int32(binary.BigEndian.Uint32(k[len(watermarkKey):])), int64(binary.BigEndian.Uint64(v)), nil
}
