package join

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// memBuffer is an in-memory Buffer: per side and key, entries sorted by
// (t, seq). It checks the WindowJoin's contract: Put creates a new entry,
// SetMatched and Delete see existing ones, and Put's bytes are copied.
type memBuffer struct {
	sides [2]map[string]*[]memEntry
	n     int
}

type memEntry struct {
	t       int64
	seq     uint64
	rec     []byte
	matched bool
}

func newMemBuffer() *memBuffer {
	return &memBuffer{sides: [2]map[string]*[]memEntry{{}, {}}}
}

// entries returns the entries of side and key; an emptied key keeps its
// slice, so that the next Put does not allocate (the benchmark measures
// the join, not the fake).
func (b *memBuffer) entries(side Side, key []byte) *[]memEntry {
	es := b.sides[side][string(key)]
	if es == nil {
		es = new([]memEntry)
		b.sides[side][string(key)] = es
	}
	return es
}

func (b *memBuffer) search(es []memEntry, t int64, seq uint64) (int, bool) {
	return slices.BinarySearchFunc(es, memEntry{t: t, seq: seq}, func(a, b memEntry) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

// Put implements Buffer.Put.
func (b *memBuffer) Put(side Side, key []byte, t int64, seq uint64, rec []byte, matched bool) error {
	es := b.entries(side, key)
	i, found := b.search(*es, t, seq)
	if found {
		return fmt.Errorf("put existing %v %s t=%d seq=%d", side, key, t, seq)
	}
	*es = slices.Insert(*es, i, memEntry{t: t, seq: seq, rec: bytes.Clone(rec), matched: matched})
	b.n++
	return nil
}

// Scan implements Buffer.Scan.
func (b *memBuffer) Scan(side Side, key []byte, from, to int64, fn func(t int64, seq uint64, rec []byte, matched bool) error) error {
	es := *b.entries(side, key)
	i, _ := b.search(es, from, 0)
	for ; i < len(es) && es[i].t <= to; i++ {
		if err := fn(es[i].t, es[i].seq, es[i].rec, es[i].matched); err != nil {
			return err
		}
	}
	return nil
}

// SetMatched implements Buffer.SetMatched.
func (b *memBuffer) SetMatched(side Side, key []byte, t int64, seq uint64) error {
	es := *b.entries(side, key)
	i, found := b.search(es, t, seq)
	if !found {
		return fmt.Errorf("set matched on missing %v %s t=%d seq=%d", side, key, t, seq)
	}
	es[i].matched = true
	return nil
}

// Delete implements Buffer.Delete.
func (b *memBuffer) Delete(side Side, key []byte, t int64, seq uint64) error {
	es := b.entries(side, key)
	i, found := b.search(*es, t, seq)
	if !found {
		return fmt.Errorf("delete missing %v %s t=%d seq=%d", side, key, t, seq)
	}
	*es = slices.Delete(*es, i, i+1)
	b.n--
	return nil
}

// Walk implements Buffer.Walk, in (side, key, t, seq) order.
func (b *memBuffer) Walk(fn func(side Side, key []byte, t int64, seq uint64) error) error {
	for side := range b.sides {
		for _, k := range slices.Sorted(maps.Keys(b.sides[side])) {
			for _, e := range *b.sides[side][k] {
				if err := fn(Side(side), []byte(k), e.t, e.seq); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// memTable is an in-memory Table.
type memTable map[string][]byte

// Get implements Table.Get.
func (m memTable) Get(key []byte) ([]byte, bool, error) {
	v, ok := m[string(key)]
	return v, ok, nil
}

// Put implements Table.Put.
func (m memTable) Put(key, value []byte) error {
	m[string(key)] = bytes.Clone(value)
	return nil
}

// Delete implements Table.Delete.
func (m memTable) Delete(key []byte) error {
	delete(m, string(key))
	return nil
}
