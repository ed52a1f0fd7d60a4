package eddy

import (
	"strings"
	"time"
)

// Record is a Kafka-style record: the input and output of every handler.
//
// A nil Key or Value is a Kafka null, which is not the same as an empty slice;
// the SDK keeps the difference in both directions.
//
// # Lifetime of input records
//
// The Key, Value and Headers slices of a record handed to a handler, and the
// header values, are views into the host's input buffer, not copies. They are
// valid only until the handler returns; the SDK reuses the buffer for the
// next batch. A handler that keeps any of them (in a global, a cache, a
// goroutine) must keep Record.Clone() instead. The views must not be
// modified: the input buffer is read-only, so build a changed value in a new
// or reused slice. (Header names are ordinary strings and may be kept.)
//
// Returning the input record, or a copy of it with some fields changed, is
// fine: the SDK encodes a handler's result before it reads the next input.
type Record struct {
	// Key is the record key; nil is a null key.
	Key []byte
	// Value is the record value; nil is a null value (a tombstone).
	Value []byte
	// Timestamp is milliseconds since the Unix epoch, UTC.
	Timestamp int64
	// Headers are the record headers, in order. An output record carries
	// exactly the headers it holds: returning the input record keeps its
	// headers, and setting Headers to nil drops them.
	Headers []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte // nil is a null header value
}

// Time returns the record's timestamp as a time.Time in UTC.
func (r Record) Time() time.Time { return time.UnixMilli(r.Timestamp).UTC() }

// Clone returns a deep copy of r that owns all its bytes, so it stays valid
// after the handler returns. Nil and empty slices are kept apart.
func (r Record) Clone() Record {
	c := Record{Key: cloneBytes(r.Key), Value: cloneBytes(r.Value), Timestamp: r.Timestamp}
	if r.Headers != nil {
		c.Headers = make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i] = Header{Key: strings.Clone(h.Key), Value: cloneBytes(h.Value)}
		}
	}
	return c
}

// cloneBytes copies b, keeping nil as nil and empty as empty.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// HeaderOutput is the header naming the output of its step a record goes
// to (ABI.md, "Named outputs"). [Record.ToOutput] sets it.
const HeaderOutput = "eddy.output"

// ToOutput returns r sent to the named output of its step: the pipeline
// file gives a map, filter or flat_map step its outputs (outputs: [name,
// ...]), and later steps read one as <step>.<name>. A record sent to no
// output stays the step's own output; one sent to a name the step does not
// have is dead-lettered. The host takes the header off before the record
// goes on. r's headers are not changed: the result has its own slice.
func (r Record) ToOutput(name string) Record {
	hs := make([]Header, 0, len(r.Headers)+1)
	for _, h := range r.Headers {
		if h.Key != HeaderOutput {
			hs = append(hs, h)
		}
	}
	r.Headers = append(hs, Header{Key: HeaderOutput, Value: []byte(name)})
	return r
}
