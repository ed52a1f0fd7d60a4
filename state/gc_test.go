package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestValueLogGarbageCollected overwrites values kept in the value log
// (over valueThreshold) until most of its files are garbage, and checks
// that collect rewrites them: the value log shrinks, and every key
// still reads its last value, also after a reopen.
func TestValueLogGarbageCollected(t *testing.T) {
	dir := t.TempDir()
	// Value log files of Badger's least size, 1 MiB, fill sooner; a
	// compaction of the tables at close drops the values written over,
	// which counts their bytes in the value log as garbage.
	opts := Options{tune: func(o badger.Options) badger.Options {
		return o.WithValueLogFileSize(1 << 20).WithCompactL0OnClose(true)
	}}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	const keys, rounds = 2000, 4
	value := func(k, round int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("%d/%d;", k, round)), 1024/8)
	}
	s := db.Store("p", "big", 0)
	for round := range rounds {
		for k := range keys {
			if err := s.Put([]byte(fmt.Sprint(k)), value(k, round)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(int64(round)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	before := vlogBytes(t, dir)
	if before < rounds*keys*1024 {
		t.Fatalf("value log of %d bytes before the collection: the values are not in it", before)
	}
	if n := db.collect(); n == 0 {
		t.Fatal("no value log file rewritten, with three quarters of the values written over")
	}
	after := vlogBytes(t, dir)
	t.Logf("value log: %d bytes before the collection, %d after", before, after)
	if after > before*3/4 {
		t.Errorf("value log of %d bytes after the collection, %d before", after, before)
	}
	check := func(s *Store) {
		t.Helper()
		for k := range keys {
			v, ok, err := s.Get([]byte(fmt.Sprint(k)))
			if err != nil || !ok || !bytes.Equal(v, value(k, rounds-1)) {
				t.Fatalf("key %d after the collection: %.20q %v %v", k, v, ok, err)
			}
		}
	}
	check(db.Store("p", "big", 0))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	check(db.Store("p", "big", 0))
}

// vlogBytes is the size of the value log files in dir.
func vlogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".vlog") {
			fi, err := os.Stat(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}
