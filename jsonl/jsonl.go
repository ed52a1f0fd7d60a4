// Package jsonl reads and writes records as JSON lines, the text form of
// records used by `eddy test`, `eddy produce` and `eddy consume`.
//
// One line is one record:
//
//	{"key": "user-1", "value": {"amount": 120}, "timestamp": 1700000000000, "headers": {"source": "web"}}
//
// Reading: a JSON string becomes its UTF-8 bytes; null or an absent field is
// a null key or value; any other JSON value (object, array, number, bool)
// becomes its compact JSON text. "key_b64" and "value_b64" carry arbitrary
// bytes in base64, and with Base64 set, "key" and "value" strings are base64.
// "timestamp" is milliseconds since the Unix epoch or an RFC 3339 string; an
// absent timestamp is 0. "headers" is an object of strings (or nulls).
//
// Writing is the inverse: bytes that are valid JSON other than a string are
// written as that JSON value (compacted), other UTF-8 bytes as a string,
// anything else as "…_b64"; with Base64 set, keys and values are always
// base64 strings. What a Writer writes reads back as the same records, but
// for the white space of JSON keys and values. A line is one JSON object,
// white space around it at most.
//
// With Msgpack set, values are MessagePack (a msgpack pipeline's records)
// and lines show them as JSON: a Reader converts every "value" but null to
// MessagePack (msgfield.FromJSON), and a Writer writes every value that is
// one MessagePack value as its JSON text (msgfield.AppendJSON), other bytes
// (and the lone MessagePack nil, which "value": null would read back as no
// value) as "value_b64". "value_b64" carries bytes as they are either way,
// and keys are as without Msgpack (Base64 then applies to keys only). What
// a Writer writes reads back as MessagePack values equal to the records',
// in canonical form: integers in the fewest bytes, maps sorted by key.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/msgfield"
)

// MaxLine is the longest line a Reader accepts.
const MaxLine = 64 << 20

type line struct {
	Key       json.RawMessage            `json:"key"`
	Value     json.RawMessage            `json:"value"`
	KeyB64    *string                    `json:"key_b64"`
	ValueB64  *string                    `json:"value_b64"`
	Timestamp json.RawMessage            `json:"timestamp"`
	Headers   map[string]json.RawMessage `json:"headers"`
}

// Reader reads records from JSON lines.
type Reader struct {
	Base64  bool // key and value strings are base64
	Msgpack bool // values are converted to MessagePack
	sc      *bufio.Scanner
	n       int
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	return &Reader{sc: sc}
}

// Line returns the number of the line read last (1-based).
func (r *Reader) Line() int { return r.n }

// Read returns the next record, or io.EOF after the last. Blank lines are
// skipped. Errors name the line.
func (r *Reader) Read() (abi.Record, error) {
	for r.sc.Scan() {
		r.n++
		b := bytes.TrimSpace(r.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, err := r.parse(b)
		if err != nil {
			return rec, fmt.Errorf("line %d: %w", r.n, err)
		}
		return rec, nil
	}
	if err := r.sc.Err(); err != nil {
		return abi.Record{}, fmt.Errorf("line %d: %w", r.n+1, err)
	}
	return abi.Record{}, io.EOF
}

// ReadAll reads every remaining record.
func (r *Reader) ReadAll() ([]abi.Record, error) {
	var recs []abi.Record
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
}

func (r *Reader) parse(b []byte) (abi.Record, error) {
	var l line
	var rec abi.Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return rec, fmt.Errorf("not a record object: %w", err)
	}
	// One object per line: Decode stops after the first value.
	if _, err := dec.Token(); err != io.EOF {
		return rec, errors.New("not a record object: bytes after the object")
	}
	var err error
	if rec.Key, err = r.payload("key", l.Key, l.KeyB64); err != nil {
		return rec, err
	}
	if r.Msgpack && l.ValueB64 == nil && !isNull(l.Value) {
		if rec.Value, err = msgfield.FromJSON(nil, l.Value); err != nil {
			return rec, fmt.Errorf("value: to MessagePack: %w", err)
		}
	} else if rec.Value, err = r.payload("value", l.Value, l.ValueB64); err != nil {
		return rec, err
	}
	if rec.Timestamp, err = timestamp(l.Timestamp); err != nil {
		return rec, err
	}
	names := make([]string, 0, len(l.Headers))
	for k := range l.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := l.Headers[k]
		h := abi.Header{Key: k}
		if !isNull(v) {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return rec, fmt.Errorf("header %q: want a string or null", k)
			}
			h.Value = []byte(s)
		}
		rec.Headers = append(rec.Headers, h)
	}
	return rec, nil
}

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

func (r *Reader) payload(field string, v json.RawMessage, b64 *string) ([]byte, error) {
	if b64 != nil {
		if !isNull(v) {
			return nil, fmt.Errorf("both %q and %q given", field, field+"_b64")
		}
		out, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, fmt.Errorf("%s_b64: %w", field, err)
		}
		return out, nil
	}
	if isNull(v) {
		return nil, nil
	}
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		if r.Base64 {
			out, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("%s: not base64 (--base64 is set): %w", field, err)
			}
			return out, nil
		}
		return []byte(s), nil
	}
	if r.Base64 {
		return nil, fmt.Errorf("%s: want a base64 string (--base64 is set)", field)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return buf.Bytes(), nil
}

func timestamp(v json.RawMessage) (int64, error) {
	if isNull(v) {
		return 0, nil
	}
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, fmt.Errorf("timestamp: %w", err)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, fmt.Errorf("timestamp: want milliseconds or RFC 3339: %w", err)
		}
		return t.UnixMilli(), nil
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp: want integer milliseconds or an RFC 3339 string, got %s", v)
	}
	return ms, nil
}

// Writer writes records as JSON lines.
type Writer struct {
	Base64  bool // write keys and values as base64 strings
	Msgpack bool // show MessagePack values as JSON
	w       *bufio.Writer
	buf     []byte
}

// NewWriter returns a Writer to w. Call Flush when done.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Write writes one record.
func (w *Writer) Write(rec *abi.Record) error {
	b := append(w.buf[:0], '{')
	b = w.appendPayload(b, "key", rec.Key)
	b = append(b, ',')
	if w.Msgpack {
		b = appendMsgpack(b, rec.Value)
	} else {
		b = w.appendPayload(b, "value", rec.Value)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, rec.Timestamp, 10)
	if len(rec.Headers) > 0 {
		b = append(b, `,"headers":{`...)
		for i, h := range rec.Headers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, h.Key)
			b = append(b, ':')
			if h.Value == nil {
				b = append(b, "null"...)
			} else {
				b = appendString(b, string(h.Value))
			}
		}
		b = append(b, '}')
	}
	b = append(b, '}', '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Flush writes buffered lines.
func (w *Writer) Flush() error { return w.w.Flush() }

func (w *Writer) appendPayload(b []byte, field string, v []byte) []byte {
	switch {
	case v == nil:
		return append(appendString(b, field), ":null"...)
	case w.Base64:
		return appendString(append(appendString(b, field), ':'), base64.StdEncoding.EncodeToString(v))
	case jsonOtherThanString(v):
		var buf bytes.Buffer
		_ = json.Compact(&buf, v)
		return append(append(appendString(b, field), ':'), buf.Bytes()...)
	case utf8.Valid(v):
		return appendString(append(appendString(b, field), ':'), string(v))
	default:
		return appendString(append(appendString(b, field+"_b64"), ':'), base64.StdEncoding.EncodeToString(v))
	}
}

// appendMsgpack appends the "value" member of a MessagePack value: its JSON
// text, null for no value, "value_b64" for the lone nil and for bytes that
// are not one MessagePack value with a JSON form.
func appendMsgpack(b, v []byte) []byte {
	if v == nil {
		return append(b, `"value":null`...)
	}
	if len(v) != 1 || v[0] != msgpcode.Nil {
		if out, err := msgfield.AppendJSON(append(b, `"value":`...), v); err == nil {
			return out
		}
	}
	return appendString(append(appendString(b, "value_b64"), ':'), base64.StdEncoding.EncodeToString(v))
}

// jsonOtherThanString says whether v is JSON whose first token is not a
// string: such a value is written as the JSON it is (compacted). A JSON
// string, even after white space, is written as a string holding v's
// bytes, since a reader gives back a string's contents.
func jsonOtherThanString(v []byte) bool {
	t := bytes.TrimLeft(v, " \t\r\n")
	return len(t) > 0 && t[0] != '"' && json.Valid(v)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
