package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// DB is a node's state database. It is safe for concurrent use; the Stores
// it returns are not (one task owns each).
type DB struct {
	bdb *badger.DB
	// stopGC stops the value log's garbage collection (collectGarbage);
	// gcDone is closed when it has.
	stopGC   chan struct{}
	stopOnce sync.Once
	gcDone   chan struct{}
}

// Options configure Open.
type Options struct {
	// InMemory keeps everything in memory (tests); Dir is then ignored.
	InMemory bool
	// Logger receives Badger's warnings and errors. Default: discarded.
	Logger *slog.Logger
	// tune changes Badger's options (tests).
	tune func(badger.Options) badger.Options
}

// Open opens (or creates) the state database in dir.
func Open(dir string, opts Options) (*DB, error) {
	var bo badger.Options
	if opts.InMemory {
		// No value log: every value is in the tree (Badger refuses values
		// over the value threshold in memory).
		bo = BadgerOptions("").WithInMemory(true).WithValueThreshold(badger.DefaultOptions("").ValueThreshold)
	} else {
		bo = BadgerOptions(dir)
	}
	bo = bo.WithLogger(badgerLogger{opts.Logger})
	if opts.tune != nil {
		bo = opts.tune(bo)
	}
	bdb, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", dir, err)
	}
	db := &DB{bdb: bdb, stopGC: make(chan struct{}), gcDone: make(chan struct{})}
	if opts.InMemory {
		close(db.gcDone) // everything is in the LSM tree: no value log
	} else {
		go db.collectGarbage()
	}
	return db, nil
}

// BadgerOptions are the options Open gives Badger for a database in dir
// (its logger aside). docs/design.md, "State on disk", says why they
// depart from Badger's defaults.
func BadgerOptions(dir string) badger.Options {
	return badger.DefaultOptions(dir).
		WithLogger(nil).
		// The changelog is the durable copy; the local one is a cache that
		// restores from it, so writes need not be synced one by one.
		WithSyncWrites(false).
		WithMemTableSize(16 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(32 << 20).
		WithValueLogFileSize(valueLogFileSize).
		WithValueThreshold(valueThreshold).
		// Badger's default of 4 compactors is for 4 cores or more: on
		// fewer, compactions during a restore kept the node's other
		// goroutines (its admin API, other partitions) waiting for a CPU.
		WithNumCompactors(min(4, max(2, runtime.GOMAXPROCS(0))))
}

// valueLogFileSize is the size of Badger's value log files, which also
// bounds a value.
const valueLogFileSize = 64 << 20

// valueThreshold is the size from which a value is kept in Badger's value
// log, its key in the LSM tree with a pointer to it. Compactions then
// rewrite keys and pointers, not the values: a restore of a gigabyte of
// 1 KiB values cost a node about 75 s of CPU when the values were in the
// LSM tree (Badger's default keeps every value under 1 MB there), most of
// it compactions rewriting them level after level, which left its admin
// API and its other partitions waiting for a CPU (BENCHMARKS.md, "Failover
// with and without a standby"). Smaller values (counts, sums, small
// records) stay in the tree, where a read needs no second lookup.
// docs/design.md, "State on disk".
const valueThreshold = 256

// gcInterval is how often collectGarbage looks for value log files to
// rewrite.
const gcInterval = time.Minute

// gcDiscardRatio is the share of a value log file's bytes that must be
// garbage (overwritten or deleted values) before it is rewritten.
const gcDiscardRatio = 0.5

// collectGarbage rewrites, every gcInterval, the value log files of which
// at least gcDiscardRatio is garbage, until there is none, and returns when
// Close stops it. Without it a value log only grows: a value written over
// or deleted is dropped from the LSM tree by compactions, but its bytes in
// the value log stay until their file is rewritten.
func (db *DB) collectGarbage() {
	defer close(db.gcDone)
	t := time.NewTicker(gcInterval)
	defer t.Stop()
	for {
		select {
		case <-db.stopGC:
			return
		case <-t.C:
		}
		db.collect()
	}
}

// collect rewrites the value log files of which at least gcDiscardRatio
// is garbage, one after another, and returns how many it rewrote.
func (db *DB) collect() int {
	n := 0
	for {
		select {
		case <-db.stopGC:
			return n
		default:
		}
		// ErrNoRewrite when no file has that much garbage, ErrRejected
		// while another collection runs or the database closes.
		if db.bdb.RunValueLogGC(gcDiscardRatio) != nil {
			return n
		}
		n++
	}
}

// Close closes the database. Pending changes of open stores are lost.
func (db *DB) Close() error {
	db.stopOnce.Do(func() { close(db.stopGC) })
	<-db.gcDone
	return db.bdb.Close()
}

// Size returns the database's size on disk in bytes: its LSM tree (keys and
// small values) and its value log, as Badger last measured them (at open,
// then once a minute). It is cheap, and safe to call at any time, also
// after Close (it then returns the last measure).
func (db *DB) Size() (lsm, vlog int64) { return db.bdb.Size() }

// Store returns the keyspace of (pipeline, name, partition).
func (db *DB) Store(pipeline, name string, partition int32) *Store {
	var p []byte
	p = binary.AppendUvarint(p, uint64(len(pipeline)))
	p = append(p, pipeline...)
	p = binary.AppendUvarint(p, uint64(len(name)))
	p = append(p, name...)
	p = binary.BigEndian.AppendUint32(p, uint32(partition))
	return &Store{
		db:         db,
		data:       append([]byte{'d'}, p...),
		checkpoint: append(append([]byte{'c'}, p...), "checkpoint"...),
		pending:    map[string]*pendingChange{},
		reads:      map[string]committed{},
	}
}

// Limits of a store's keys and values. Put and Create refuse longer ones
// (ErrTooLarge), so that neither the changelog nor Badger ever sees them:
// Badger refuses keys over 65,000 bytes at the commit, which would stop the
// node; and a changelog record (key, value and about a hundred bytes of
// record overhead) must stay under the producer's and a default broker's
// message limit (1,000,012 bytes for franz-go's default batch size). The
// guest's limits (abi.MaxStateKey, abi.MaxStateValue) and those of the
// record keys of aggregate and join steps leave room for the host's
// prefixes within these.
const (
	MaxKey   = 16<<10 + 64 // 16 KiB for a guest's or a record's key, plus the host's prefixes
	MaxValue = 960 << 10   // 960 KiB
)

// badgerMaxKey is the longest key Badger takes (its maxKeySize), prefix
// included.
const badgerMaxKey = 65000

// Restorable reports whether Restore can apply a change of key to value:
// whether Badger takes it. It may be over MaxKey or MaxValue (a changelog
// written before those limits, by an older version), but not over what
// Badger refuses (a key over 65,000 bytes with the store's prefix, a value
// over the value log's file size), which would fail every restore.
func (s *Store) Restorable(key, value []byte) bool {
	return len(s.data)+len(key) <= badgerMaxKey && len(value) < valueLogFileSize
}

// ErrTooLarge is returned by Put and Create for a key or value over the
// limits (MaxKey, MaxValue). The store is unchanged.
var ErrTooLarge = errors.New("state: key or value too large")

// ErrBadCheckpoint is returned by Checkpoint and CheckpointOf for a stored
// checkpoint that does not decode (damaged, or not written by this
// package): the local copy cannot say where it is, so the caller rebuilds
// the store from its changelog.
var ErrBadCheckpoint = errors.New("state: checkpoint does not decode")

func checkSize(key, value []byte) error {
	switch {
	case len(key) > MaxKey:
		return fmt.Errorf("%w: key of %d bytes, the limit is %d", ErrTooLarge, len(key), MaxKey)
	case len(value) > MaxValue:
		return fmt.Errorf("%w: value of %d bytes, the limit is %d", ErrTooLarge, len(value), MaxValue)
	}
	return nil
}

// Change is one change to a key: a new value, or a deletion.
type Change struct {
	Key     []byte
	Value   []byte // nil when Deleted
	Deleted bool
}

// Store is one keyspace. It implements the runtime's State (the guest's
// keyed-state host calls). Not safe for concurrent use.
type Store struct {
	db         *DB
	data       []byte // prefix of data keys
	checkpoint []byte // key of the checkpoint
	// pending holds the open transaction's changes. A Put to a key already
	// changed reuses its entry and key, so it allocates only the copy of
	// the value; values are never written in place, so what Changes
	// returned stays valid.
	pending map[string]*pendingChange
	gen     uint64 // see Generation
	// reads keeps committed values (and absences) read from or written to
	// Badger, so that reading a key again does not search the LSM tree: a
	// table lookup per record, a guest's state_get. Bounded by readsBudget
	// bytes: past it, it starts over.
	reads      map[string]committed
	readsBytes int
	// changelogID is the id of the changelog topic the checkpoints refer
	// to (SetChangelogID), written with each; zero when unknown.
	changelogID [16]byte
}

// committed is a key's committed value as reads keeps it (ok false: absent).
type committed struct {
	value []byte
	ok    bool
}

// readsBudget bounds the bytes of keys and values a Store's read cache
// keeps.
const readsBudget = 4 << 20

func (s *Store) remember(key string, value []byte, ok bool) {
	if s.readsBytes+len(key)+len(value) > readsBudget {
		clear(s.reads)
		s.readsBytes = 0
	}
	if old, had := s.reads[key]; had {
		s.readsBytes -= len(key) + len(old.value)
	}
	s.reads[key] = committed{value: value, ok: ok}
	s.readsBytes += len(key) + len(value)
}

func (s *Store) forgetReads() {
	clear(s.reads)
	s.readsBytes = 0
}

type pendingChange struct {
	Change
	// fresh is set when the key has no value outside the open
	// transaction (see Create): deleting it again drops the change.
	fresh bool
}

// Get returns the value of key, seeing the open transaction's changes. The
// value is the caller's to keep.
func (s *Store) Get(key []byte) ([]byte, bool, error) {
	if c, ok := s.pending[string(key)]; ok {
		if c.Deleted {
			return nil, false, nil
		}
		return bytes.Clone(c.Value), true, nil
	}
	if c, ok := s.reads[string(key)]; ok {
		return bytes.Clone(c.value), c.ok, nil
	}
	var v []byte
	err := s.db.bdb.View(func(txn *badger.Txn) error {
		it, err := txn.Get(s.dataKey(key))
		if err != nil {
			return err
		}
		v, err = it.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		s.remember(string(key), nil, false)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: get: %w", err)
	}
	s.remember(string(key), v, true)
	return bytes.Clone(v), true, nil
}

// Put sets key to value in the open transaction. It returns ErrTooLarge,
// changing nothing, for a key or value over the limits.
func (s *Store) Put(key, value []byte) error {
	if err := checkSize(key, value); err != nil {
		return err
	}
	s.change(key, bytes.Clone(value), false, false)
	return nil
}

// Create is Put for a key that the caller knows has no value, as the open
// transaction sees it. If the key is deleted again before the transaction
// commits, both changes are dropped: nothing goes to the changelog or to
// disk for a key that lived only inside the transaction (a session window
// that grew, a window opened and expired between two commits).
func (s *Store) Create(key, value []byte) error {
	if err := checkSize(key, value); err != nil {
		return err
	}
	s.change(key, bytes.Clone(value), false, true)
	return nil
}

// Delete removes key in the open transaction. A key over MaxKey is never
// stored: deleting it does nothing.
func (s *Store) Delete(key []byte) error {
	if len(key) <= MaxKey {
		s.change(key, nil, true, false)
	}
	return nil
}

func (s *Store) change(key, value []byte, deleted, create bool) {
	c, ok := s.pending[string(key)]
	switch {
	case !ok:
		// A key without a change in the transaction: Create's caller says
		// it has no committed value either.
		k := string(key)
		s.pending[k] = &pendingChange{Change: Change{Key: []byte(k), Value: value, Deleted: deleted}, fresh: create}
	case deleted && c.fresh:
		delete(s.pending, string(key))
	default:
		// Over a deletion, the committed value may exist: the change
		// stays fresh only if it was.
		c.Change = Change{Key: c.Key, Value: value, Deleted: deleted}
	}
}

// Changes returns the open transaction's changes in key order: what goes to
// the changelog.
func (s *Store) Changes() []Change {
	out := make([]Change, 0, len(s.pending))
	for _, c := range s.pending {
		out = append(out, c.Change)
	}
	slices.SortFunc(out, func(a, b Change) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// Pending returns how many keys the open transaction changes.
func (s *Store) Pending() int { return len(s.pending) }

// Abort drops the open transaction's changes.
func (s *Store) Abort() {
	clear(s.pending)
	s.gen++
}

// Generation changes whenever the store's contents change other than by
// Put, Delete and Commit: on Abort, Restore and Wipe. A caller that keeps
// copies of values checks it to know when they may be stale.
func (s *Store) Generation() uint64 { return s.gen }

// Commit applies the open transaction's changes to disk together with the
// checkpoint next: the changelog offset the local copy now reaches (the
// offset after the last changelog record of this transaction). Call it once
// the transaction has committed.
func (s *Store) Commit(next int64) error {
	// Each key appears once, so the order of the writes does not matter.
	err := s.apply(func(yield func(*Change) bool) {
		for _, c := range s.pending {
			if !yield(&c.Change) {
				return
			}
		}
	}, next)
	if err != nil {
		s.forgetReads() // what reached disk is unknown
		return err
	}
	for k, c := range s.pending {
		// Keys already read stay true; the others are not read back on
		// their own (window and join state writes many keys once).
		if _, ok := s.reads[k]; ok {
			s.remember(k, c.Value, !c.Deleted) // values are never written in place
		}
	}
	clear(s.pending)
	return nil
}

// Restore applies changelog records read from the store's changelog
// partition, in order, and records next as the checkpoint. Pending changes
// are not touched (restore happens before processing).
func (s *Store) Restore(changes []Change, next int64) error {
	s.gen++
	s.forgetReads()
	return s.apply(func(yield func(*Change) bool) {
		for i := range changes {
			if !yield(&changes[i]) {
				return
			}
		}
	}, next)
}

func (s *Store) apply(changes iter.Seq[*Change], next int64) error {
	wb := s.db.bdb.NewWriteBatch()
	defer wb.Cancel()
	for c := range changes {
		var err error
		if c.Deleted {
			err = wb.Delete(s.dataKey(c.Key))
		} else {
			err = wb.Set(s.dataKey(c.Key), c.Value)
		}
		if err != nil {
			return fmt.Errorf("state: write: %w", brief{err})
		}
	}
	if err := wb.Set(bytes.Clone(s.checkpoint), appendCheckpoint(nil, next, s.changelogID)); err != nil {
		return fmt.Errorf("state: write checkpoint: %w", brief{err})
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("state: commit: %w", brief{err})
	}
	return nil
}

// brief is a Badger error shown by its first line, at most briefLen bytes:
// some of Badger's errors carry a hex dump of the key or value at fault
// (up to a KiB of it, over dozens of lines), which must not reach the log.
type brief struct{ err error }

const briefLen = 200

func (b brief) Error() string {
	s := b.err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > briefLen {
		s = s[:briefLen] + "..."
	}
	return s
}

func (b brief) Unwrap() error { return b.err }

// Checkpoint returns the changelog offset the local copy reaches (where a
// restore continues reading), or -1 when the store has never been written:
// restore it from the start of the changelog.
func (s *Store) Checkpoint() (int64, error) {
	next, _, err := s.CheckpointOf()
	return next, err
}

// CheckpointOf is Checkpoint with the id of the changelog topic the
// checkpoint refers to: zero when it was written without one (before
// SetChangelogID, or by a version that did not record ids).
func (s *Store) CheckpointOf() (next int64, changelogID [16]byte, err error) {
	next = -1
	err = s.db.bdb.View(func(txn *badger.Txn) error {
		it, err := txn.Get(s.checkpoint)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			next, changelogID, err = decodeCheckpoint(v)
			return err
		})
	})
	if err != nil {
		return -1, [16]byte{}, fmt.Errorf("state: checkpoint: %w", err)
	}
	return next, changelogID, nil
}

// appendCheckpoint appends a checkpoint's encoding to b: the offset (8
// bytes, big-endian), then the changelog's id when known (16 bytes).
func appendCheckpoint(b []byte, next int64, changelogID [16]byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(next))
	if changelogID != ([16]byte{}) {
		b = append(b, changelogID[:]...)
	}
	return b
}

// decodeCheckpoint decodes appendCheckpoint's output; a checkpoint written
// before ids were recorded is the 8 bytes of the offset alone.
func decodeCheckpoint(v []byte) (next int64, changelogID [16]byte, err error) {
	if len(v) != 8 && len(v) != 24 {
		return -1, changelogID, fmt.Errorf("%w: %d bytes", ErrBadCheckpoint, len(v))
	}
	next = int64(binary.BigEndian.Uint64(v))
	if next < 0 {
		// Commit and Restore write offsets of a changelog, never negative.
		return -1, changelogID, fmt.Errorf("%w: offset %d", ErrBadCheckpoint, next)
	}
	copy(changelogID[:], v[8:])
	return next, changelogID, nil
}

// SetChangelogID sets the id of the changelog topic (Kafka's topic id) that
// the store's checkpoints refer to from now on: Commit and Restore write it
// with the offset, so that a restore can tell a changelog that was deleted
// and created again from the one the local copy follows. Zero: unknown
// (the broker gives no ids).
func (s *Store) SetChangelogID(id [16]byte) { s.changelogID = id }

// Wipe deletes the keyspace and its checkpoint, and drops pending changes:
// the store is rebuilt from the changelog alone afterwards.
//
// The keys are deleted in write batches, not with Badger's DropPrefix:
// DropPrefix blocks every other write to the database while it runs, and
// the database holds every store of the node — another store's restore,
// a standby copy's writes or a task's commit would fail meanwhile (two
// rebuilds at once stopped a node). The checkpoint is first made one that
// does not decode, so that a wipe cut short (a crash) is taken for a
// damaged store at the next restore and done again, never for a copy at
// its checkpoint.
func (s *Store) Wipe() error {
	clear(s.pending)
	s.forgetReads()
	s.gen++
	if err := s.db.bdb.Update(func(txn *badger.Txn) error { return txn.Set(bytes.Clone(s.checkpoint), []byte("wiping")) }); err != nil {
		return fmt.Errorf("state: wipe: %w", brief{err})
	}
	wb := s.db.bdb.NewWriteBatch()
	defer wb.Cancel()
	err := s.db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: s.data, PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = wb.Delete(bytes.Clone(s.checkpoint))
	}
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return fmt.Errorf("state: wipe: %w", brief{err})
	}
	return nil
}

// Scan calls fn for every key with the given prefix, in key order, as the
// open transaction sees them (committed keys merged with pending changes).
// fn must not change the store; key and value are valid during the call.
func (s *Store) Scan(prefix []byte, fn func(key, value []byte) error) error {
	// Only the changes under prefix are sorted: a scan of a few keys in a
	// transaction that changed many must not sort them all.
	var pend []Change
	for k, c := range s.pending {
		if strings.HasPrefix(k, string(prefix)) {
			pend = append(pend, c.Change)
		}
	}
	slices.SortFunc(pend, func(a, b Change) int { return bytes.Compare(a.Key, b.Key) })
	return s.db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: s.dataKey(prefix), PrefetchValues: false})
		defer it.Close()
		emit := func(c Change) error {
			if c.Deleted {
				return nil
			}
			return fn(c.Key, c.Value)
		}
		for it.Rewind(); it.Valid(); it.Next() {
			key := it.Item().Key()[len(s.data):]
			for len(pend) > 0 && bytes.Compare(pend[0].Key, key) < 0 {
				if err := emit(pend[0]); err != nil {
					return err
				}
				pend = pend[1:]
			}
			if len(pend) > 0 && bytes.Equal(pend[0].Key, key) {
				if err := emit(pend[0]); err != nil {
					return err
				}
				pend = pend[1:]
				continue
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if err := fn(key, v); err != nil {
				return err
			}
		}
		for _, c := range pend {
			if err := emit(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// Len counts the keys as the open transaction sees them.
func (s *Store) Len() (int, error) {
	n := 0
	err := s.Scan(nil, func(_, _ []byte) error { n++; return nil })
	return n, err
}

func (s *Store) dataKey(key []byte) []byte {
	return append(append(make([]byte, 0, len(s.data)+len(key)), s.data...), key...)
}

// badgerLogger adapts slog to Badger's logger, keeping warnings and errors.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	if b.l != nil {
		b.l.Error("badger: " + fmt.Sprintf(f, a...))
	}
}

func (b badgerLogger) Warningf(f string, a ...any) {
	if b.l != nil {
		b.l.Warn("badger: " + fmt.Sprintf(f, a...))
	}
}

func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}
