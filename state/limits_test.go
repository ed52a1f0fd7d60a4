package state_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/state"
)

// TestLimits: Put and Create refuse keys and values over the limits, which
// Badger (keys over 65,000 bytes) or the changelog's broker would refuse
// only at the commit; the store commits what it took. The guest's limits fit
// within the store's.
func TestLimits(t *testing.T) {
	if abi.MaxStateKey > state.MaxKey || abi.MaxStateValue > state.MaxValue {
		t.Fatalf("the ABI's limits (%d, %d) exceed the store's (%d, %d)", abi.MaxStateKey, abi.MaxStateValue, state.MaxKey, state.MaxValue)
	}
	if state.MaxKey+state.MaxValue+128 > 1_000_012 {
		t.Fatalf("a changelog record of %d bytes may not fit franz-go's default batch of 1,000,012 bytes", state.MaxKey+state.MaxValue+128)
	}
	db := open(t, t.TempDir())
	defer db.Close()
	s := db.Store("p", "s", 0)
	bigKey := bytes.Repeat([]byte{'k'}, 100_000)
	for name, err := range map[string]error{
		"put key":      s.Put(bigKey, nil),
		"create key":   s.Create(bigKey, []byte("v")),
		"put value":    s.Put([]byte("k"), make([]byte, state.MaxValue+1)),
		"create value": s.Create([]byte("k"), make([]byte, state.MaxValue+1)),
	} {
		if !errors.Is(err, state.ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", name, err)
		}
	}
	if err := s.Delete(bigKey); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(bytes.Repeat([]byte{'k'}, state.MaxKey), make([]byte, state.MaxValue)); err != nil {
		t.Fatal(err)
	}
	if s.Pending() != 1 {
		t.Fatalf("%d pending changes, want the one at the limits", s.Pending())
	}
	if err := s.Commit(1); err != nil {
		t.Fatalf("commit at the limits: %v", err)
	}
}

// TestCheckpointKeepsTheChangelogID: a checkpoint records the changelog's
// id once it is set; one written before reads back with a zero id.
func TestCheckpointKeepsTheChangelogID(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
	s := db.Store("p", "s", 0)
	if err := s.Restore(nil, 5); err != nil {
		t.Fatal(err)
	}
	if next, id, err := s.CheckpointOf(); err != nil || next != 5 || id != ([16]byte{}) {
		t.Fatalf("checkpoint %d %x %v, want 5 without an id", next, id, err)
	}
	id := [16]byte{0xab, 1, 2}
	s.SetChangelogID(id)
	s.Put([]byte("k"), []byte("v"))
	if err := s.Commit(7); err != nil {
		t.Fatal(err)
	}
	s2 := db.Store("p", "s", 0)
	if next, got, err := s2.CheckpointOf(); err != nil || next != 7 || got != id {
		t.Fatalf("checkpoint %d %x %v, want 7 with %x", next, got, err, id)
	}
	if next, err := s2.Checkpoint(); err != nil || next != 7 {
		t.Fatalf("Checkpoint %d %v, want 7", next, err)
	}
}
