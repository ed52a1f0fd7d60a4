package state

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// FuzzDecodeCheckpoint: a checkpoint read back from the data directory
// decodes or fails with ErrBadCheckpoint, never panics; what decodes is an
// offset a changelog can have and encodes back to the same bytes.
func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add(appendCheckpoint(nil, 42, [16]byte{}))
	f.Add(appendCheckpoint(nil, 1<<40, [16]byte{1, 2, 3}))
	f.Add([]byte{})
	f.Add(make([]byte, 9))
	f.Add(appendCheckpoint(nil, -5, [16]byte{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		next, id, err := decodeCheckpoint(b)
		if err != nil {
			if !errors.Is(err, ErrBadCheckpoint) {
				t.Fatalf("%x: error %v is not ErrBadCheckpoint", b, err)
			}
			return
		}
		if next < 0 {
			t.Fatalf("%x decodes to offset %d", b, next)
		}
		if got := appendCheckpoint(nil, next, id); !bytes.Equal(got, b) && !(len(b) == 24 && id == [16]byte{}) {
			t.Fatalf("%x decodes to %d %x, which encodes to %x", b, next, id, got)
		}
	})
}

// TestDamagedCheckpoint: a checkpoint that does not decode (damaged data
// directory) is reported as ErrBadCheckpoint, which the node answers by
// rebuilding the store from its changelog (host/changelog.go), not as an
// error that stops it, nor as "no checkpoint" over a store that has data.
func TestDamagedCheckpoint(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Store("p", "s", 0)
	for _, v := range [][]byte{{1, 2, 3}, appendCheckpoint(nil, -7, [16]byte{9})} {
		if err := db.bdb.Update(func(txn *badger.Txn) error { return txn.Set(st.checkpoint, v) }); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.CheckpointOf(); !errors.Is(err, ErrBadCheckpoint) {
			t.Fatalf("checkpoint %x: %v, want ErrBadCheckpoint", v, err)
		}
	}
}
