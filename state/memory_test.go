package state_test

import (
	"testing"

	"github.com/eddy-streams/eddy/state"
)

func TestMemory(t *testing.T) {
	s := state.NewMemory()
	if _, ok, _ := s.Get([]byte("a")); ok {
		t.Fatal("empty store has a")
	}
	v := []byte("1")
	s.Put([]byte("a"), v)
	v[0] = '2' // the store keeps its own copy
	got, ok, err := s.Get([]byte("a"))
	if err != nil || !ok || string(got) != "1" {
		t.Fatalf("get a = %q %v %v", got, ok, err)
	}
	s.Delete([]byte("a"))
	if s.Len() != 0 {
		t.Fatalf("len %d after delete", s.Len())
	}
}
