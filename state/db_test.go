package state_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
)

var _ runtime.State = (*state.Store)(nil)

func open(t *testing.T, dir string) *state.DB {
	t.Helper()
	db, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func get(t *testing.T, s *state.Store, k string) string {
	t.Helper()
	v, ok, err := s.Get([]byte(k))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "<absent>"
	}
	return string(v)
}

func TestCommitAbortAndReopen(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	s := db.Store("p", "counts", 3)
	if cp, _ := s.Checkpoint(); cp != -1 {
		t.Fatalf("new store checkpoint %d", cp)
	}
	s.Put([]byte("a"), []byte("1"))
	s.Put([]byte("b"), []byte("2"))
	if get(t, s, "a") != "1" {
		t.Fatal("pending put not visible")
	}
	ch := s.Changes()
	if len(ch) != 2 || string(ch[0].Key) != "a" || string(ch[1].Key) != "b" {
		t.Fatalf("changes %+v", ch)
	}
	if err := s.Commit(10); err != nil {
		t.Fatal(err)
	}
	s.Put([]byte("a"), []byte("100"))
	s.Delete([]byte("b"))
	if get(t, s, "a") != "100" || get(t, s, "b") != "<absent>" {
		t.Fatal("pending changes not visible")
	}
	s.Abort() // the transaction aborted: back to the committed values
	if get(t, s, "a") != "1" || get(t, s, "b") != "2" {
		t.Fatalf("after abort a=%s b=%s", get(t, s, "a"), get(t, s, "b"))
	}
	s.Delete([]byte("b"))
	if err := s.Commit(12); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open(t, dir)
	defer db.Close()
	s = db.Store("p", "counts", 3)
	if cp, _ := s.Checkpoint(); cp != 12 {
		t.Fatalf("checkpoint after reopen %d, want 12", cp)
	}
	if get(t, s, "a") != "1" || get(t, s, "b") != "<absent>" {
		t.Fatalf("after reopen a=%s b=%s", get(t, s, "a"), get(t, s, "b"))
	}
}

// TestCreateThenDelete checks that a key created and deleted in one
// transaction leaves no change, while one that had a value before the
// transaction leaves a deletion.
func TestCreateThenDelete(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
	s := db.Store("p", "s", 0)
	s.Put([]byte("old"), []byte("1"))
	if err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	s.Create([]byte("new"), []byte("a"))
	s.Put([]byte("new"), []byte("b")) // still without a committed value
	s.Delete([]byte("new"))
	s.Delete([]byte("old"))
	s.Create([]byte("old"), []byte("2")) // over a deletion: "old" has a committed value
	s.Delete([]byte("old"))
	s.Create([]byte("kept"), []byte("c"))
	var got []string
	for _, c := range s.Changes() {
		got = append(got, fmt.Sprintf("%s=%s/%v", c.Key, c.Value, c.Deleted))
	}
	if want := "[kept=c/false old=/true]"; fmt.Sprint(got) != want {
		t.Fatalf("changes %v, want %s", got, want)
	}
	if s.Pending() != 2 || get(t, s, "new") != "<absent>" || get(t, s, "old") != "<absent>" || get(t, s, "kept") != "c" {
		t.Fatalf("pending %d, new=%s old=%s kept=%s", s.Pending(), get(t, s, "new"), get(t, s, "old"), get(t, s, "kept"))
	}
	if err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Len(); n != 1 {
		t.Fatalf("%d keys after commit, want 1", n)
	}
}

func TestKeyspacesAreSeparate(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
	stores := []*state.Store{db.Store("p", "s", 0), db.Store("p", "s", 1), db.Store("p", "t", 0), db.Store("q", "s", 0),
		db.Store("p", "s\x01", 0)} // names that could collide if not length-prefixed
	for i, s := range stores {
		s.Put([]byte("k"), []byte(fmt.Sprint(i)))
		if err := s.Commit(int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range stores {
		if got := get(t, s, "k"); got != fmt.Sprint(i) {
			t.Fatalf("store %d sees %s", i, got)
		}
		if n, _ := s.Len(); n != 1 {
			t.Fatalf("store %d has %d keys", i, n)
		}
	}
}

func TestRestoreWipeAndScan(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
	s := db.Store("p", "s", 0)
	err := s.Restore([]state.Change{
		{Key: []byte("w/2"), Value: []byte("b")},
		{Key: []byte("w/1"), Value: []byte("a")},
		{Key: []byte("w/3"), Value: []byte("c")},
		{Key: []byte("x"), Value: []byte("other")},
		{Key: []byte("w/3"), Deleted: true}, // a later tombstone wins
	}, 5)
	if err != nil {
		t.Fatal(err)
	}
	s.Put([]byte("w/0"), []byte("new"))
	s.Delete([]byte("w/2"))
	s.Put([]byte("w/1"), []byte("A"))
	var seen []string
	if err := s.Scan([]byte("w/"), func(k, v []byte) error {
		seen = append(seen, string(k)+"="+string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != "w/0=new w/1=A" {
		t.Fatalf("scan: %s", got)
	}
	if n, _ := s.Len(); n != 3 {
		t.Fatalf("len %d, want 3 (w/0, w/1, x)", n)
	}
	if err := s.Wipe(); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Len(); n != 0 {
		t.Fatalf("%d keys after wipe", n)
	}
	if cp, _ := s.Checkpoint(); cp != -1 {
		t.Fatalf("checkpoint %d after wipe", cp)
	}
}

// TestGuestUsesBadgerState runs the counter guest against a Badger store
// through the keyed-state host calls: an aborted batch leaves no trace, a
// committed one survives.
func TestGuestUsesBadgerState(t *testing.T) {
	ctx := context.Background()
	db := open(t, t.TempDir())
	defer db.Close()
	s := db.Store("p", "counter", 0)
	eng, err := runtime.NewEngine(runtime.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)
	wasm, err := os.ReadFile("../testdata/go/counter.wasm")
	if err != nil {
		t.Fatal(err)
	}
	fn, err := eng.Load(ctx, "counter", wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer fn.Close(ctx)
	inst, err := fn.NewInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inst.SetState(s)
	run := func(keys ...string) []string {
		var in []abi.Record
		for _, k := range keys {
			in = append(in, abi.Record{Key: []byte(k)})
		}
		var out runtime.Output
		if err := inst.Process(ctx, in, &out); err != nil || len(out.Failed) > 0 {
			t.Fatal(err, out.Failed)
		}
		var vs []string
		for _, r := range out.Records {
			vs = append(vs, string(r.Value))
		}
		return vs
	}
	if got := strings.Join(run("a", "b", "a"), ","); got != "1,1,2" {
		t.Fatalf("first batch: %s", got)
	}
	s.Abort()
	if got := strings.Join(run("a"), ","); got != "1" {
		t.Fatalf("after an aborted batch: %s, want 1", got)
	}
	if err := s.Commit(7); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run("a", "a"), ","); got != "2,3" {
		t.Fatalf("after a committed batch: %s, want 2,3", got)
	}
}

// TestWipeBesideOtherWrites wipes one store while another store of the same
// database restores and a third wipes too: no write of the others is
// refused (Badger's DropPrefix, which Wipe used, blocks every write to the
// database while it runs), the wiped stores are empty with no checkpoint,
// and the other keeps every key and its checkpoint.
func TestWipeBesideOtherWrites(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
	fill := func(s *state.Store, n int) {
		var cs []state.Change
		for i := range n {
			cs = append(cs, state.Change{Key: fmt.Appendf(nil, "k%06d", i), Value: []byte("v")})
		}
		if err := s.Restore(cs, int64(n)); err != nil {
			t.Fatal(err)
		}
	}
	a, b, other := db.Store("p", "a", 0), db.Store("p", "b", 1), db.Store("p", "a", 1)
	fill(a, 20000)
	fill(b, 20000)
	done := make(chan error, 2)
	for _, s := range []*state.Store{a, b} {
		go func() { done <- s.Wipe() }()
	}
	for i := range 50 {
		if err := other.Restore([]state.Change{{Key: fmt.Appendf(nil, "o%03d", i), Value: []byte("x")}}, int64(i+1)); err != nil {
			t.Fatalf("a write beside the wipes was refused: %v", err)
		}
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*state.Store{a, b} {
		if n, _ := s.Len(); n != 0 {
			t.Errorf("%d keys after the wipe", n)
		}
		if cp, err := s.Checkpoint(); err != nil || cp != -1 {
			t.Errorf("checkpoint after the wipe: %d, %v", cp, err)
		}
	}
	if n, _ := other.Len(); n != 50 {
		t.Errorf("the other store holds %d keys, want 50", n)
	}
	if cp, _ := other.Checkpoint(); cp != 50 {
		t.Errorf("the other store's checkpoint %d, want 50", cp)
	}
}
