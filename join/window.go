package join

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

// Buffer holds the records of both sides of a windowed join until their
// window closes, with a flag saying whether each was matched. The caller
// implements it on its state store ([AppendBufferKey] gives a suitable key
// layout). Everything a WindowJoin needs after a restart is in the Buffer;
// its in-memory index is rebuilt from [Buffer.Walk] by
// [WindowJoin.Restore].
//
// An entry is identified by (side, key, t, seq): t is the record's event
// time and seq a number the WindowJoin assigns in arrival order. Keys are
// never nil. A WindowJoin calls Buffer only from the goroutine that calls
// its methods, never from inside a Scan or Walk callback, and an error from
// Buffer aborts that call and is returned wrapped. Byte slices passed to
// the Buffer, and to its callbacks, are valid only during the call: copy
// what you keep.
type Buffer interface {
	// Put stores a new entry: rec is the record encoded by
	// [AppendRecord].
	Put(side Side, key []byte, t int64, seq uint64, rec []byte, matched bool) error
	// Scan calls fn for each entry of side and key with from <= t <= to,
	// in ascending (t, seq) order, and returns the first error fn returns.
	Scan(side Side, key []byte, from, to int64, fn func(t int64, seq uint64, rec []byte, matched bool) error) error
	// SetMatched sets the matched flag of an existing entry.
	SetMatched(side Side, key []byte, t int64, seq uint64) error
	// Delete removes an existing entry.
	Delete(side Side, key []byte, t int64, seq uint64) error
	// Walk calls fn for every entry, in any order, and returns the first
	// error fn returns. Only Restore calls it.
	Walk(fn func(side Side, key []byte, t int64, seq uint64) error) error
}

// Config configures a [WindowJoin]. The zero values of the optional fields
// are usable defaults; with Before and After both zero, records match only
// at equal times.
type Config struct {
	// Type is InnerJoin (the default), LeftJoin or OuterJoin.
	Type Type
	// Before and After define the join window: a right record at t'
	// matches a left record at t with the same key when
	// t-Before <= t' <= t+After (Kafka Streams JoinWindows before and
	// after). Non-negative. For a symmetric window of 5 s, set both to 5 s.
	Before, After time.Duration
	// Grace (allowed lateness) accepts records up to Grace behind the
	// watermark, and keeps buffered records Grace longer. Default 0.
	Grace time.Duration
	// Disorder is the allowed out-of-orderness: an input's watermark is
	// the largest event time seen on it minus Disorder. Default 0.
	Disorder time.Duration
	// IdleTimeout excludes an input that received no record for this long
	// (processing time) from the task watermark. Default 0: never.
	IdleTimeout time.Duration
	// Time extracts event time from records of both sides. Default
	// windowing.RecordTime.
	Time windowing.Extractor
	// Clock is the processing-time clock for idle inputs. Default time.Now.
	Clock func() time.Time
}

// Validate reports whether c is usable. Errors wrap [ErrInvalidConfig].
func (c Config) Validate() error {
	if c.Type != InnerJoin && c.Type != LeftJoin && c.Type != OuterJoin {
		return fmt.Errorf("join type %v: %w", c.Type, ErrInvalidConfig)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"before", c.Before}, {"after", c.After}, {"grace", c.Grace}, {"disorder", c.Disorder}, {"idle timeout", c.IdleTimeout}} {
		if d.v < 0 || d.v%time.Millisecond != 0 {
			return fmt.Errorf("join %s %v must be a non-negative whole number of milliseconds: %w", d.name, d.v, ErrInvalidConfig)
		}
	}
	return nil
}

// Stats are a WindowJoin's counters.
type Stats struct {
	Left, Right uint64 // records processed per side, late ones included
	Pairs       uint64 // matched pairs emitted
	Unmatched   uint64 // unmatched results emitted (a Pair with a nil side)
	Late        uint64 // Late entries produced
	NullKeys    uint64 // null-key records dropped (inner joins; right side of left joins)
	Expired     uint64 // buffered records deleted when their window closed
	Buffered    int    // records in the buffer
}

// WindowJoin is the event-time logic of a windowed stream-stream join (Kafka
// Streams KStream-KStream join with JoinWindows): it tracks watermarks over
// the inputs of both sides, decides lateness, finds matches in the other
// side's buffer, and says which buffered records expire, emitting the
// unmatched ones of left and outer joins when their window closes. Records
// live in the caller's [Buffer].
//
// Only the expiry index (side, key, time and sequence of each buffered
// record, in a min-heap by expiry) is held in memory. A WindowJoin is not
// safe for concurrent use: a task owns it.
type WindowJoin struct {
	cfg    Config
	time   windowing.Extractor
	buf    Buffer
	wms    *windowing.Watermarks
	before int64
	after  int64
	grace  int64

	floor    int64 // watermark restored or forced by Flush
	advanced int64 // watermark up to which expiries were handled
	seq      uint64
	index    expiryHeap

	// Scan callbacks, made once so that Scan calls do not allocate.
	collectFn func(t int64, seq uint64, rec []byte, matched bool) error
	findFn    func(t int64, seq uint64, rec []byte, matched bool) error
	matches   []match
	want      uint64 // findFn: the seq looked for
	found     bool   // findFn: it was found
	enc       []byte
	stats     Stats
}

// match is a buffered record of the other side found by Scan.
type match struct {
	t       int64
	seq     uint64
	matched bool
	rec     *abi.Record
}

// NewWindowJoin returns a WindowJoin for cfg whose records live in buf. It
// fails with an error wrapping ErrInvalidConfig when cfg does not validate.
func NewWindowJoin(cfg Config, buf Buffer) (*WindowJoin, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Time == nil {
		cfg.Time = windowing.RecordTime{}
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	j := &WindowJoin{
		cfg:      cfg,
		time:     cfg.Time,
		buf:      buf,
		wms:      windowing.NewWatermarks(cfg.Disorder, cfg.IdleTimeout, cfg.Clock),
		before:   cfg.Before.Milliseconds(),
		after:    cfg.After.Milliseconds(),
		grace:    cfg.Grace.Milliseconds(),
		floor:    windowing.NoWatermark,
		advanced: windowing.NoWatermark,
	}
	j.collectFn = func(t int64, seq uint64, b []byte, matched bool) error {
		rec, err := decodeCopy(b)
		if err != nil {
			return err
		}
		j.matches = append(j.matches, match{t: t, seq: seq, matched: matched, rec: rec})
		return nil
	}
	j.findFn = func(t int64, seq uint64, b []byte, matched bool) error {
		if seq != j.want {
			return nil
		}
		j.found = true
		if matched {
			return nil
		}
		rec, err := decodeCopy(b)
		if err != nil {
			return err
		}
		j.matches = append(j.matches, match{t: t, seq: seq, rec: rec})
		return nil
	}
	return j, nil
}

// decodeCopy decodes a buffered record into a new Record that owns its
// bytes (one copy of b, which the Record's slices point into).
func decodeCopy(b []byte) (*abi.Record, error) {
	rec := new(abi.Record)
	if err := DecodeRecord(bytes.Clone(b), rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// Assign declares the task's inputs so that each holds the watermark back
// from the start, even before its first record (until it turns idle).
// Inputs not declared are added on their first record.
//
// An input is a stream of records in which the bounded disorder holds,
// typically one partition of one side's topic. Inputs are identified by
// int32 ids of the caller's choosing, unique across both sides: with
// co-partitioned topics a task reading partition p of each side could use
// 2p for the left and 2p+1 for the right.
func (j *WindowJoin) Assign(inputs ...int32) { j.wms.Assign(inputs...) }

// Revoke forgets an input's watermark.
func (j *WindowJoin) Revoke(input int32) { j.wms.Revoke(input) }

// Watermark returns the task watermark (windowing.NoWatermark before any
// record, math.MaxInt64 after Flush).
func (j *WindowJoin) Watermark() int64 { return max(j.wms.Current(), j.floor) }

// InputTimes returns the largest event time seen on each input (see
// windowing.Watermarks.Times). After a restart, give them back with
// Progress, so that an input that receives nothing more does not hold the
// watermark back.
func (j *WindowJoin) InputTimes() map[int32]int64 { return j.wms.Times() }

// Stats returns the counters.
func (j *WindowJoin) Stats() Stats {
	s := j.stats
	s.Buffered = len(j.index)
	return s
}

// Restore rebuilds the WindowJoin after a restart, before any other call
// but Assign. The caller passes the task watermark it checkpointed (with
// the buffer, in the same transaction as the output); Restore walks the
// Buffer to rebuild the expiry index and continues sequence numbers after
// the largest one found. Buffered records already expired at that
// watermark, and those whose time is outside the event-time range, expire
// at the next Process, Advance or Flush.
//
// The per-input watermarks start over from the restored task watermark,
// which never goes backwards; call Assign with the task's inputs too, or
// the first input to deliver a record would advance the watermark alone.
// Restoring a WindowJoin that has processed records or already holds an
// index is an error.
func (j *WindowJoin) Restore(watermark int64) error {
	if len(j.index) > 0 || j.stats != (Stats{}) || j.advanced != windowing.NoWatermark {
		return errors.New("join: restore into a join that is in use")
	}
	j.floor = max(j.floor, watermark)
	err := j.buf.Walk(func(side Side, key []byte, t int64, seq uint64) error {
		if side > Right {
			return fmt.Errorf("join: buffered entry on side %d: %w", side, ErrCorrupt)
		}
		at := j.expiry(side, t)
		if windowing.CheckTime(t) != nil {
			// Buffered before times were range-checked, or corrupt:
			// no record can match it any more; let it expire at once.
			at = math.MinInt64
		}
		j.index.push(entry{at: at, side: side, key: bytes.Clone(key), t: t, seq: seq})
		j.seq = max(j.seq, seq+1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("join: restore: %w", err)
	}
	return nil
}

// Process handles one record of one side, in arrival order, and appends
// the results to out.
//
// A record is late when the watermark before it is past its time plus
// Grace: it goes to out.Late and is not joined. Otherwise it is joined with
// the other side's buffered records of the same key within the join window
// (one Pair per match, ordered by the other record's time then arrival),
// both are marked matched, and it is buffered until its window closes. A
// null key never matches: inner joins drop the record (counted in
// [Stats.NullKeys]), left joins emit a left one unmatched at once and drop
// a right one, outer joins emit either unmatched at once. Then the
// watermark advances, and records whose window closed expire: see
// [WindowJoin.Advance].
//
// side must be Left or Right; Process panics otherwise. An extractor
// error, or an event time outside [windowing.MinTime, windowing.MaxTime]
// (an error wrapping windowing.ErrTimeRange), wraps
// windowing.ErrNoTimestamp: the record was not used and the caller
// dead-letters it. A Buffer error is returned wrapped and leaves the
// WindowJoin in an undefined state (the task restarts from its
// checkpoint).
func (j *WindowJoin) Process(side Side, input int32, rec *abi.Record, out *Output) error {
	if side > Right {
		panic(fmt.Sprintf("join: Process on side %d", side))
	}
	t, err := j.time.Timestamp(rec)
	if err == nil {
		err = windowing.CheckTime(t)
	}
	if err != nil {
		return fmt.Errorf("join: %v input %d: %w", side, input, err)
	}
	if side == Left {
		j.stats.Left++
	} else {
		j.stats.Right++
	}
	switch wm := j.Watermark(); {
	case wm > add(t, j.grace):
		j.stats.Late++
		out.Late = append(out.Late, Late{Side: side, Input: input, Record: rec, Time: t, Watermark: wm})
	case rec.Key == nil:
		if j.emitsUnmatched(side) {
			j.unmatched(side, rec, t, out)
		} else {
			j.stats.NullKeys++
		}
	default:
		if err := j.join(side, rec, t, out); err != nil {
			return err
		}
	}
	return j.progress(input, t, out)
}

// ProcessBatch calls Process for each record of a batch from one input.
func (j *WindowJoin) ProcessBatch(side Side, input int32, recs []abi.Record, out *Output) error {
	for i := range recs {
		if err := j.Process(side, input, &recs[i], out); err != nil {
			return err
		}
	}
	return nil
}

// Progress records that input has reached event time t without a record:
// its watermark becomes t minus the disorder, as if a record at t had
// arrived. Records that expire are emitted to out as in Advance. A t
// outside [windowing.MinTime, windowing.MaxTime] is refused with an error
// wrapping windowing.ErrTimeRange, and changes nothing.
func (j *WindowJoin) Progress(input int32, t int64, out *Output) error {
	if err := windowing.CheckTime(t); err != nil {
		return fmt.Errorf("join: progress of input %d: %w", input, err)
	}
	return j.progress(input, t, out)
}

// progress is Progress for a time known to be in range.
func (j *WindowJoin) progress(input int32, t int64, out *Output) error {
	if wm := max(j.wms.Observe(input, t), j.floor); wm > j.advanced {
		return j.advanceTo(wm, out)
	}
	return nil
}

// Advance reads the processing-time clock to update idle inputs, and
// expires the buffered records the watermark now allows, appending
// unmatched results to out. Call it after each batch and periodically when
// no records arrive (for example every commit interval), or idle inputs
// are never detected.
//
// A left record at t expires when the watermark passes t+After+Grace, a
// right record at t when it passes t+Before+Grace: no record the join can
// still accept could match them. On expiry, left and outer joins emit the
// unmatched left records (Right nil), outer joins also the unmatched right
// records (Left nil), in the order (expiry time, side, key, time,
// arrival); then the records are deleted from the buffer.
func (j *WindowJoin) Advance(out *Output) error {
	if wm := max(j.wms.Tick(), j.floor); wm > j.advanced {
		return j.advanceTo(wm, out)
	}
	return nil
}

// Flush treats the input as ended: the watermark jumps to the end of time
// and every buffered record expires (unmatched ones are emitted as in
// Advance), leaving the buffer empty. Records processed after Flush are
// late. Use it for bounded inputs such as `eddy test`.
func (j *WindowJoin) Flush(out *Output) error {
	j.floor = math.MaxInt64
	return j.advanceTo(math.MaxInt64, out)
}

// emitsUnmatched reports whether unmatched records of side are emitted.
func (j *WindowJoin) emitsUnmatched(side Side) bool {
	return j.cfg.Type == OuterJoin || (j.cfg.Type == LeftJoin && side == Left)
}

// expiry returns the watermark that a buffered record of side at t must
// pass to expire: the last time at which an acceptable record can match it.
func (j *WindowJoin) expiry(side Side, t int64) int64 {
	if side == Left {
		return add(add(t, j.after), j.grace)
	}
	return add(add(t, j.before), j.grace)
}

func (j *WindowJoin) unmatched(side Side, rec *abi.Record, t int64, out *Output) {
	p := Pair{Key: rec.Key, Time: t}
	if side == Left {
		p.Left = rec
	} else {
		p.Right = rec
	}
	j.stats.Unmatched++
	out.Pairs = append(out.Pairs, p)
}

// join matches rec with the other side's buffer and buffers it.
func (j *WindowJoin) join(side Side, rec *abi.Record, t int64, out *Output) error {
	other := Right
	from, to := add(t, -j.before), add(t, j.after) // left at t: rights in [t-before, t+after]
	if side == Right {
		other = Left
		from, to = add(t, -j.after), add(t, j.before) // right at t: lefts in [t-after, t+before]
	}
	j.matches = j.matches[:0]
	if err := j.buf.Scan(other, rec.Key, from, to, j.collectFn); err != nil {
		return fmt.Errorf("join: scan %v buffer: %w", other, err)
	}
	flag := j.emitsUnmatched(other)
	for i := range j.matches {
		m := &j.matches[i]
		p := Pair{Key: rec.Key, Left: m.rec, Right: rec, Time: max(t, m.t)}
		if side == Left {
			p.Left, p.Right = rec, m.rec
		}
		out.Pairs = append(out.Pairs, p)
		if flag && !m.matched {
			if err := j.buf.SetMatched(other, rec.Key, m.t, m.seq); err != nil {
				return fmt.Errorf("join: set %v matched: %w", other, err)
			}
		}
		m.rec = nil
	}
	j.stats.Pairs += uint64(len(j.matches))
	seq := j.seq
	j.seq++
	j.enc = AppendRecord(j.enc[:0], rec)
	if err := j.buf.Put(side, rec.Key, t, seq, j.enc, len(j.matches) > 0); err != nil {
		return fmt.Errorf("join: buffer %v: %w", side, err)
	}
	j.index.push(entry{at: j.expiry(side, t), side: side, key: bytes.Clone(rec.Key), t: t, seq: seq})
	return nil
}

// advanceTo expires the buffered records whose expiry the watermark wm has
// passed (all of them when wm is the end of time), in index order.
func (j *WindowJoin) advanceTo(wm int64, out *Output) error {
	j.advanced = wm
	for len(j.index) > 0 && (j.index[0].at < wm || wm == math.MaxInt64) {
		e := j.index.pop()
		key := e.key
		if j.emitsUnmatched(e.side) {
			j.matches, j.want, j.found = j.matches[:0], e.seq, false
			if err := j.buf.Scan(e.side, key, e.t, e.t, j.findFn); err != nil {
				return fmt.Errorf("join: read expired %v record: %w", e.side, err)
			}
			if !j.found {
				return fmt.Errorf("join: expired %v record (key of %d bytes) t=%d seq=%d is not in the buffer: %w", e.side, len(e.key), e.t, e.seq, ErrCorrupt)
			}
			if len(j.matches) > 0 {
				j.unmatched(e.side, j.matches[0].rec, e.t, out)
				j.matches[0].rec = nil
			}
		}
		if err := j.buf.Delete(e.side, key, e.t, e.seq); err != nil {
			return fmt.Errorf("join: delete expired %v record: %w", e.side, err)
		}
		j.stats.Expired++
	}
	return nil
}

// entry is a buffered record in the expiry index.
type entry struct {
	at   int64 // expiry: the entry expires when the watermark passes it
	side Side
	key  []byte // a copy, owned by the entry
	t    int64
	seq  uint64
}

// less orders entries by expiry, side, key, time and sequence: the order in
// which expired records are emitted, the same whatever the arrival order
// (but for the sequence, which follows it).
func (a *entry) less(b *entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.side != b.side {
		return a.side < b.side
	}
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// expiryHeap is a binary min-heap of entries. It is written out rather than
// using container/heap, whose interface{} boxing allocates per push.
type expiryHeap []entry

func (h *expiryHeap) push(e entry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(&s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *expiryHeap) pop() entry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = entry{}
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].less(&s[m]) {
			m = l
		}
		if r := l + 1; r < n && s[r].less(&s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
