package state

import (
	"bytes"
	"fmt"
	"testing"
)

// TestReadsStayTrue reads keys (present and absent) so that the store keeps
// them, then changes them through every path that changes committed state
// — commit, abort, restore, wipe — and checks that Get always answers what
// Badger holds, as a fresh view of the same keyspace reads it.
func TestReadsStayTrue(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "s", 0)
	check := func(when string) {
		t.Helper()
		fresh := db.Store("p", "s", 0)
		for _, k := range []string{"a", "b", "c"} {
			v, ok, err := st.Get([]byte(k))
			fv, fok, ferr := fresh.Get([]byte(k))
			if err != nil || ferr != nil || ok != fok || string(v) != string(fv) {
				t.Fatalf("%s: key %s: got %q %v (%v), disk has %q %v (%v)", when, k, v, ok, err, fv, fok, ferr)
			}
		}
	}
	st.Put([]byte("a"), []byte("1"))
	if err := st.Commit(1); err != nil {
		t.Fatal(err)
	}
	check("after the first commit") // a, b and c are now remembered: a present, b and c absent
	st.Put([]byte("b"), []byte("2"))
	st.Delete([]byte("a"))
	if err := st.Commit(2); err != nil {
		t.Fatal(err)
	}
	check("after a commit that adds b and deletes a")
	st.Put([]byte("c"), []byte("3"))
	st.Abort()
	check("after an aborted put")
	if err := st.Restore([]Change{{Key: []byte("c"), Value: []byte("4")}, {Key: []byte("b"), Deleted: true}}, 3); err != nil {
		t.Fatal(err)
	}
	check("after a restore")
	if err := st.Wipe(); err != nil {
		t.Fatal(err)
	}
	check("after a wipe")
	// A value read is the caller's: changing it changes nothing stored.
	st.Put([]byte("a"), []byte("5"))
	if err := st.Commit(4); err != nil {
		t.Fatal(err)
	}
	v, _, _ := st.Get([]byte("a"))
	v[0] = 'x'
	check("after the caller changed a value it read")
}

// TestReadsAreBounded reads more than the read cache's budget: it starts
// over instead of growing, and answers stay right.
func TestReadsAreBounded(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "s", 0)
	val := make([]byte, 64<<10)
	for i := range 200 { // 12.5 MiB
		st.Put([]byte(fmt.Sprint(i)), append(val[:0:0], byte(i)))
	}
	if err := st.Commit(1); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		st.Put([]byte(fmt.Sprint(i)), append(bytes.Clone(val), byte(i)))
	}
	if err := st.Commit(2); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		v, ok, err := st.Get([]byte(fmt.Sprint(i)))
		if err != nil || !ok || len(v) != len(val)+1 || v[len(val)] != byte(i) {
			t.Fatalf("key %d: %d bytes, %v, %v", i, len(v), ok, err)
		}
		if st.readsBytes > readsBudget {
			t.Fatalf("the read cache holds %d bytes, over its budget of %d", st.readsBytes, readsBudget)
		}
	}
}
