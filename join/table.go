package join

import (
	"fmt"

	"github.com/eddy-streams/eddy/abi"
)

// Table is the current value of each key of a table (a changelog topic
// read as a KTable). The caller implements it: in Eddy it is a state store.
//
// A TableJoin calls Table only from the goroutine that calls its methods;
// an error from Table aborts that call and is returned wrapped. Key and
// value slices passed to Table are valid only during the call: copy what
// you keep.
type Table interface {
	// Get returns the value of key, and whether there is one. The value
	// ends up in the Output ([Pair.Right]), so the table must not modify it
	// afterwards (return a copy if the store's bytes are only valid in a
	// transaction).
	Get(key []byte) (value []byte, ok bool, err error)
	// Put sets the value of key.
	Put(key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(key []byte) error
}

// TableStats are a TableJoin's counters.
type TableStats struct {
	Updates   uint64 // table records applied: puts and deletes
	Deletes   uint64 // tombstones applied
	Lookups   uint64 // stream records joined, null keys included
	Pairs     uint64 // stream records that found a table value
	Unmatched uint64 // left join: stream records emitted without a value
	NullKeys  uint64 // records dropped for a null key (table records; inner-join stream records)
}

// TableJoin joins a stream with a table, as a Kafka Streams KStream-KTable
// join: each stream record is joined with the table's value for its key at
// the moment it is processed. Table records only update the table; they
// never produce output.
//
// Records are processed in arrival order and results depend on the arrival
// order of table updates relative to stream records, exactly as in Kafka
// Streams. They do not depend on batch boundaries: a TableJoin holds no
// state but the Table, and emits at once.
//
// A TableJoin is not safe for concurrent use: a task owns it.
type TableJoin struct {
	typ   Type
	table Table
	stats TableStats
}

// NewTableJoin returns a stream-table join of type typ (InnerJoin or
// LeftJoin) over table. Any other type is an error wrapping
// [ErrInvalidConfig].
func NewTableJoin(typ Type, table Table) (*TableJoin, error) {
	if typ != InnerJoin && typ != LeftJoin {
		return nil, fmt.Errorf("stream-table join: type %v: want inner or left: %w", typ, ErrInvalidConfig)
	}
	return &TableJoin{typ: typ, table: table}, nil
}

// Type returns the join type.
func (j *TableJoin) Type() Type { return j.typ }

// Stats returns the counters.
func (j *TableJoin) Stats() TableStats { return j.stats }

// Update applies a table record: its value becomes the key's value, and a
// nil value (a tombstone) deletes the key. A record with a null key is
// dropped and counted in [TableStats.NullKeys], as Kafka Streams does.
func (j *TableJoin) Update(rec *abi.Record) error {
	if rec.Key == nil {
		j.stats.NullKeys++
		return nil
	}
	if rec.Value == nil {
		if err := j.table.Delete(rec.Key); err != nil {
			return fmt.Errorf("join: table delete: %w", err)
		}
		j.stats.Deletes++
	} else if err := j.table.Put(rec.Key, rec.Value); err != nil {
		return fmt.Errorf("join: table put: %w", err)
	}
	j.stats.Updates++
	return nil
}

// Lookup joins a stream record with the table's current value for its key
// and appends the result to out: a Pair whose Right record holds the key
// and the table value (the table keeps values only, so Right has no
// timestamp or headers) and whose Time is the stream record's timestamp.
//
// When the key has no value, an inner join emits nothing and a left join
// emits the record with Right nil. A null key never matches: an inner join
// drops the record (counted in [TableStats.NullKeys]), a left join emits it
// unmatched. Values are not inspected: a null-value stream record joins
// like any other.
func (j *TableJoin) Lookup(rec *abi.Record, out *Output) error {
	j.stats.Lookups++
	var (
		v  []byte
		ok bool
	)
	if rec.Key != nil {
		var err error
		if v, ok, err = j.table.Get(rec.Key); err != nil {
			return fmt.Errorf("join: table get: %w", err)
		}
	}
	p := Pair{Key: rec.Key, Left: rec, Time: rec.Timestamp}
	switch {
	case ok:
		p.Right = &abi.Record{Key: rec.Key, Value: v}
		j.stats.Pairs++
	case j.typ == InnerJoin:
		if rec.Key == nil {
			j.stats.NullKeys++
		}
		return nil
	default:
		j.stats.Unmatched++
	}
	out.Pairs = append(out.Pairs, p)
	return nil
}
