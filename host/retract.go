package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// Retractions: an aggregate with emit: update whose results an aggregate
// further on reads (pipeline.Retractions) sends, before a window's new
// result, its previous one marked abi.HeaderRetract; the steps between
// carry the mark (graph.Executor), sinks and taps drop what carries it
// (dropRetractions), and the reading aggregate keeps each of its windows'
// current records, its members, folding the window's accumulator from
// them again whenever they change (windowStore.flushMembers). The previous
// result of a window is kept in the emitting step's store under 'r'
// (prevKey) until the window is deleted.

// retractHeader is the mark of a retraction.
var retractHeader = abi.Header{Key: abi.HeaderRetract, Value: []byte("true")}

// prevKey is the store key of the last result emitted for (key, w).
func prevKey(key []byte, w windowing.Window) []byte {
	return append([]byte{'r'}, accKey(key, w)[1:]...)
}

// withRetractions turns window emissions into records as windowResults
// does, each new result of a window preceded by the retraction of the one
// emitted before it (a window whose function now emits nothing, or a
// session merged away, has its previous result retracted only), and keeps
// the new results for the next retraction.
func (t *task) withRetractions(ws *windowStore, emits []windowing.Emit, wm int64) ([]abi.Record, error) {
	out := make([]abi.Record, 0, 2*len(emits))
	for i := range emits {
		e := &emits[i]
		pk := prevKey(e.Key, e.Window)
		prev, had, err := ws.st.Get(pk)
		if err != nil {
			return nil, err
		}
		if had {
			r := windowResult(&windowing.Emit{Key: e.Key, Window: e.Window, Value: prev}, wm)
			r.Headers = append(r.Headers, retractHeader)
			out = append(out, r)
		}
		if e.Removed || e.Value == nil {
			if had {
				if err := ws.st.Delete(pk); err != nil {
					return nil, err
				}
			}
			continue
		}
		out = append(out, windowResult(e, wm))
		if ws.refuse(pk, e.Value, "result") != nil {
			// Too large to keep: it cannot be retracted, so the record
			// that carries it would stay in the windows that fold it.
			// The result itself is too large for most topics too.
			t.n.log.Warn("window result too large to keep for its retraction", "step", ws.name, "bytes", len(e.Value))
			continue
		}
		if err := ws.st.Put(pk, bytes.Clone(e.Value)); err != nil {
			return nil, err
		}
	}
	for _, k := range ws.closed {
		if err := ws.st.Delete(k); err != nil {
			return nil, err
		}
	}
	ws.closed = ws.closed[:0]
	return out, nil
}

// dropRetractions leaves out of cur (and src, kept in step) the records
// that carry a retraction: they are for the aggregate that folds the
// results they take back, never for a topic.
func dropRetractions(cur []abi.Record, src []int32) ([]abi.Record, []int32) {
	if !slices.ContainsFunc(cur, func(r abi.Record) bool { return abi.IsRetraction(r.Headers) }) {
		return cur, src
	}
	keep, keepSrc := make([]abi.Record, 0, len(cur)), make([]int32, 0, len(src))
	for i := range cur {
		if !abi.IsRetraction(cur[i].Headers) {
			keep, keepSrc = append(keep, cur[i]), append(keepSrc, src[i])
		}
	}
	return keep, keepSrc
}

// Members of a folding window store: under 'm' + the accumulator's key
// (without its 'a') + 16 bytes of the SHA-256 of the member's identity
// (memberID), the number of equal records the window holds and the record
// (encodeMember).

// maxMemberCount bounds the number of equal records one member stands for
// when it is read back: a changelog is data from outside.
const maxMemberCount = 1 << 16

// memberPrefix is the prefix of the members of the accumulator under sk.
func memberPrefix(sk []byte) []byte { return append([]byte{'m'}, sk[1:]...) }

// memberIdentity reports whether header h is part of what makes two
// records equal members: the host's own marks of a record's version, source
// and retraction are not, so that a retraction made after a hot swap still
// takes back the record made before it.
func memberIdentity(h string) bool {
	return h != abi.HeaderRetract && !strings.HasPrefix(h, "eddy.function.") && !strings.HasPrefix(h, "eddy.source.")
}

// encodeMember appends to b the count and the record: its timestamp, its
// headers that make its identity and its value. The record key is the
// window's and is not kept.
func encodeMember(b []byte, count uint64, r *abi.Record) []byte {
	b = binary.AppendUvarint(b, count)
	return appendMemberBody(b, r)
}

func appendMemberBody(b []byte, r *abi.Record) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(r.Timestamp))
	n := 0
	for _, h := range r.Headers {
		if memberIdentity(h.Key) {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, h := range r.Headers {
		if memberIdentity(h.Key) {
			b = binary.AppendUvarint(b, uint64(len(h.Key)))
			b = append(b, h.Key...)
			b = binary.AppendUvarint(b, uint64(len(h.Value)))
			b = append(b, h.Value...)
		}
	}
	return append(b, r.Value...)
}

// memberID returns the member key suffix of r: what a retraction of r
// finds it by.
func memberID(r *abi.Record) [16]byte {
	sum := sha256.Sum256(appendMemberBody(nil, r))
	return [16]byte(sum[:16])
}

var errBadMember = errors.New("window member does not decode")

// decodeMember reads what encodeMember wrote; the record's slices point
// into b.
func decodeMember(b []byte) (count uint64, r abi.Record, err error) {
	count, k := binary.Uvarint(b)
	if k <= 0 || count == 0 || count > maxMemberCount {
		return 0, r, fmt.Errorf("%w: count", errBadMember)
	}
	b = b[k:]
	if len(b) < 8 {
		return 0, r, fmt.Errorf("%w: timestamp", errBadMember)
	}
	r.Timestamp, b = int64(binary.BigEndian.Uint64(b)), b[8:]
	nh, k := binary.Uvarint(b)
	if k <= 0 || nh > uint64(len(b)-k)/2 { // a header takes two bytes at least: its two lengths
		return 0, r, fmt.Errorf("%w: headers", errBadMember)
	}
	b = b[k:]
	field := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: header", errBadMember)
		}
		f := b[k : k+int(n) : k+int(n)]
		b = b[k+int(n):]
		return f, nil
	}
	if nh > 0 {
		r.Headers = make([]abi.Header, nh)
	}
	for i := range r.Headers {
		key, err := field()
		if err != nil {
			return 0, r, err
		}
		val, err := field()
		if err != nil {
			return 0, r, err
		}
		r.Headers[i] = abi.Header{Key: string(key), Value: val}
	}
	r.Value = b
	return count, r, nil
}

// memberChange is what a batch did to one member of a group.
type memberChange struct {
	key   []byte // the member's store key
	delta int    // records added, less retractions
	from  []int  // the batch records that added it
	rec   *abi.Record
}

// flushMembers is flush for a store that folds members: each pending
// group's records change its window's members (a record adds one, a
// retraction takes its equal away), and the group's accumulator is folded
// anew from its members with one eddy_agg_add call. A record of the batch
// that fails leaves the members as they were; a member of earlier batches
// that fails now (a new version of the function refuses it) is left out of
// the fold and stays.
func (ws *windowStore) flushMembers() error {
	pend := ws.pending[:ws.npend]
	ws.groups = ws.groups[:0]
	changes := make([][]memberChange, len(pend))
	origins := make([][]int, len(pend)) // per group, per folded record: the change it comes from, or -1
	for i := range pend {
		g := &pend[i]
		prefix := memberPrefix(g.sk)
		at := map[[16]byte]int{}
		for k := range g.recs {
			r := &g.recs[k]
			id := memberID(r)
			c, ok := at[id]
			if !ok {
				c = len(changes[i])
				at[id] = c
				changes[i] = append(changes[i], memberChange{key: append(slices.Clip(prefix), id[:]...), rec: r})
			}
			mc := &changes[i][c]
			if abi.IsRetraction(r.Headers) {
				mc.delta--
				continue
			}
			mc.delta++
			mc.from = append(mc.from, g.from[k])
			mc.rec = r
		}
		for c := range changes[i] {
			if err := ws.applyMember(&changes[i][c], changes[i][c].delta); err != nil {
				return err
			}
		}
		// The members as they are now, each record as many times as the
		// window holds it, in member key order.
		byKey := map[string]int{}
		for c := range changes[i] {
			byKey[string(changes[i][c].key)] = c
		}
		ms, err := ws.groupMembers(prefix)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(ms))
		for k := range ms {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var recs []abi.Record
		for _, k := range keys {
			m := ms[k]
			r := m.rec
			r.Key = g.key
			c, ok := byKey[k]
			if !ok {
				c = -1
			}
			for range m.count {
				recs = append(recs, r)
				origins[i] = append(origins[i], c)
			}
		}
		ws.groups = append(ws.groups, abi.Group{Key: g.key, Records: recs})
	}
	if err := ws.addGroups(); err != nil {
		return err
	}
	// A failed record of the batch fails the batch record that added it
	// and is taken out of the members again, once per failure.
	for _, e := range ws.errs {
		if e.Group < 0 || e.Group >= len(pend) || e.Index < 0 || e.Index >= len(origins[e.Group]) {
			return fmt.Errorf("aggregate add: failure outside the call's records: %w", e)
		}
		c := origins[e.Group][e.Index]
		if c < 0 {
			continue
		}
		mc := &changes[e.Group][c]
		if len(mc.from) == 0 {
			continue
		}
		j := mc.from[len(mc.from)-1]
		mc.from = mc.from[:len(mc.from)-1]
		ws.fail(j, e)
		if err := ws.applyMember(mc, -1); err != nil {
			return err
		}
	}
	for i := range pend {
		acc := ws.added[i].Acc
		if acc == nil {
			var te *runtime.Error
			var err error
			if acc, err = ws.fn.AggInit(ws.ctx); errors.As(err, &te) {
				continue
			} else if err != nil {
				return err
			}
		}
		err := ws.put(pend[i].sk, acc)
		var te *runtime.Error
		if !errors.As(err, &te) {
			if err != nil {
				return err
			}
			continue
		}
		// Too large to store: the records of the batch that made it fail
		// and leave the members; the window keeps its accumulator.
		for c := range changes[i] {
			mc := &changes[i][c]
			for _, j := range mc.from {
				e := *te
				ws.fail(j, &e)
				if err := ws.applyMember(mc, -1); err != nil {
					return err
				}
			}
			mc.from = nil
		}
	}
	ws.reset()
	return nil
}

// applyMember adds delta records to member mc (taking away when negative;
// a member never goes below none), in the store and in its group's index.
func (ws *windowStore) applyMember(mc *memberChange, delta int) error {
	if delta == 0 {
		return nil
	}
	prefix := mc.key[:len(mc.key)-len(memberIDZero)]
	ms, err := ws.groupMembers(prefix)
	if err != nil {
		return err
	}
	m, ok := ms[string(mc.key)]
	count := min(max(int64(m.count)+int64(delta), 0), maxMemberCount)
	if count == 0 {
		if ok {
			delete(ms, string(mc.key))
			return ws.st.Delete(mc.key)
		}
		return nil
	}
	v := encodeMember(nil, uint64(count), mc.rec)
	if !ok {
		// The index keeps its own copy of the record.
		_, r, err := decodeMember(v)
		if err != nil {
			return err
		}
		m.rec = r
	}
	m.count = uint64(count)
	ms[string(mc.key)] = m
	return ws.st.Put(mc.key, v)
}

// member is one member of a window's set, as a group's index keeps it.
type member struct {
	count uint64
	rec   abi.Record // without its key: the window's
}

var memberIDZero [16]byte

// groupMembers returns the index of the members under prefix (a group's
// memberPrefix), read from the store the first time the group is met since
// the store last changed other than through the index (an abort, a
// restore).
func (ws *windowStore) groupMembers(prefix []byte) (map[string]member, error) {
	if g := ws.st.Generation(); g != ws.membersGen || ws.memberIndex == nil {
		ws.memberIndex, ws.membersGen = map[string]map[string]member{}, g
	}
	if ms, ok := ws.memberIndex[string(prefix)]; ok {
		return ms, nil
	}
	ms := map[string]member{}
	err := ws.st.Scan(prefix, func(k, v []byte) error {
		count, r, err := decodeMember(bytes.Clone(v))
		if err != nil {
			return nil // a damaged member is left out; nothing of this node writes one
		}
		ms[string(k)] = member{count: count, rec: r}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ws.memberIndex[string(prefix)] = ms
	return ms, nil
}

// deleteMembers deletes the members of the accumulator under sk.
func (ws *windowStore) deleteMembers(sk []byte) error {
	prefix := memberPrefix(sk)
	ms, err := ws.groupMembers(prefix)
	if err != nil {
		return err
	}
	for k := range ms {
		if err := ws.st.Delete([]byte(k)); err != nil {
			return err
		}
	}
	delete(ws.memberIndex, string(prefix))
	return nil
}
