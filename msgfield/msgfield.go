// Package msgfield reads MessagePack record values the way package
// jsonfield reads JSON ones: it finds a member by a dotted path without
// decoding the value (Find), scanning it with msgpack/v5's Decoder and
// skipping what it does not need. Pipelines whose source format is msgpack
// use it per record, for key_by fields and event-time fields.
//
// It also gives a value's JSON text (AppendJSON), which is the key of a
// key_by field that is not a string and how tools show MessagePack values,
// the MessagePack of a JSON value (FromJSON), how tools write them, and
// the event time of a field (TimeField, a windowing.Extractor).
//
// The two packages have the same shape (Parse, Path.Find, errors for a
// value that does not parse, a missing field and a field inside something
// that is not a map or object) rather than one interface over both: each
// format's caller wants the raw member in its own format, and what it does
// with it (a key, a time) differs by format. Callers pick the package by
// the pipeline's record format.
//
// Everything a value declares is checked against the bytes there are
// before it is believed: a string, binary or extension length against the
// bytes left, a map or array length against the bytes its entries need at
// least (one a value), and nesting against maxDepth. So a value of a few
// bytes cannot make the scan allocate or loop for the lengths it claims,
// nor recurse without bound (msgpack/v5's own Skip recurses as deep as the
// value nests).
package msgfield

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/jsonfield"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Errors, wrapped with the path and, for ErrSyntax, what is wrong.
var (
	ErrSyntax  = errors.New("not valid MessagePack")
	ErrNotMap  = errors.New("is not a MessagePack map")
	ErrMissing = errors.New("is missing")
)

// maxDepth bounds the nesting of maps and arrays, as jsonfield bounds JSON's
// (and encoding/json's, 10000): deeper input is refused rather than
// followed by recursion.
const maxDepth = 10000

// Path is a dotted member path, such as "user.id". Its segments match map
// keys that are MessagePack strings; keys of other types never match.
type Path []string

// Parse splits a dotted path; an empty segment is an error. It is
// jsonfield.Parse, so that a pipeline's field means the same in either
// format.
func Parse(path string) (Path, error) {
	p, err := jsonfield.Parse(path)
	return Path(p), err
}

func (p Path) String() string { return strings.Join(p, ".") }

// Find returns the raw MessagePack value at the path in doc, a subslice of
// doc. The last of repeated keys counts, as in jsonfield. doc must be
// exactly one MessagePack value: bytes after it are ErrSyntax, as is a
// value that is cut short, declares more than it holds or nests deeper
// than maxDepth.
func (p Path) Find(doc []byte) ([]byte, error) {
	v := doc
	for i, name := range p {
		where := "the value"
		if i > 0 {
			where = strings.Join(p[:i], ".")
		}
		s := newScanner(v)
		m, err := s.findIn(name, i == 0)
		s.close()
		switch {
		case errors.Is(err, ErrNotMap):
			return nil, fmt.Errorf("%s %w", where, ErrNotMap)
		case err != nil:
			// The whole value is checked when its map is scanned, the
			// first time round: a syntax error is the value's.
			return nil, fmt.Errorf("%s: %w", where, err)
		case m == nil:
			return nil, fmt.Errorf("field %s %w", strings.Join(p[:i+1], "."), ErrMissing)
		}
		v = m
	}
	return v, nil
}

// Valid reports whether doc is exactly one MessagePack value, within the
// bounds Find checks.
func Valid(doc []byte) bool { return Check(doc) == nil }

// Check returns nil when doc is exactly one MessagePack value, within the
// bounds Find checks, else an error wrapping ErrSyntax that says what is
// wrong.
func Check(doc []byte) error {
	s := newScanner(doc)
	defer s.close()
	return s.whole()
}

// Bytes returns the contents of raw when it is one MessagePack string or
// binary value (a subslice of raw), and false for any other value.
func Bytes(raw []byte) ([]byte, bool) {
	if len(raw) == 0 || !(msgpcode.IsString(raw[0]) || msgpcode.IsBin(raw[0])) {
		return nil, false
	}
	s := newScanner(raw)
	defer s.close()
	n, err := s.d.DecodeBytesLen()
	if err != nil || n < 0 || n != s.r.Len() {
		return nil, false
	}
	return raw[len(raw)-n:], true
}

// scanner reads one MessagePack document with a msgpack/v5 Decoder. The
// Decoder reads the bytes.Reader directly (it is an io.ByteScanner, so the
// Decoder puts no buffer of its own in between): the reader's position is
// the Decoder's, and skipping a string's bytes is moving the reader on.
type scanner struct {
	doc []byte
	r   bytes.Reader
	d   *msgpack.Decoder
}

func newScanner(doc []byte) *scanner {
	s := &scanner{doc: doc, d: msgpack.GetDecoder()}
	s.r.Reset(doc)
	s.d.Reset(&s.r)
	return s
}

// close gives the Decoder back to msgpack/v5's pool.
func (s *scanner) close() { msgpack.PutDecoder(s.d) }

// pos is the index in doc of the next byte to read.
func (s *scanner) pos() int { return len(s.doc) - s.r.Len() }

// whole checks that the document is one value with nothing after it.
func (s *scanner) whole() error {
	if err := s.skip(0); err != nil {
		return err
	}
	return s.end()
}

// end checks that the whole document has been read.
func (s *scanner) end() error {
	switch n := s.r.Len(); n {
	case 0:
	case 1:
		return fmt.Errorf("%w: 1 byte after the value", ErrSyntax)
	default:
		return fmt.Errorf("%w: %d bytes after the value", ErrSyntax, n)
	}
	return nil
}

// findIn returns the value of the last key name of the map the document
// is, or nil; ErrNotMap when the document is another value. With whole,
// the document must end with the map, and a document that is not a map is
// ErrSyntax rather than ErrNotMap when it is not valid MessagePack either
// (say, JSON text given to a msgpack pipeline).
func (s *scanner) findIn(name string, whole bool) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if !isMap(c) {
		if whole {
			if err := s.whole(); err != nil {
				return nil, err
			}
		}
		return nil, ErrNotMap
	}
	n, err := s.mapLen()
	if err != nil {
		return nil, err
	}
	var found []byte
	for range n {
		match, err := s.key(name)
		if err != nil {
			return nil, err
		}
		start := s.pos()
		if err := s.skip(1); err != nil {
			return nil, err
		}
		if match {
			found = s.doc[start:s.pos()]
		}
	}
	if whole {
		if err := s.end(); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// key reads a map key, a member of the document's map, and reports
// whether it is the string name.
func (s *scanner) key(name string) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	if !msgpcode.IsString(c) {
		return false, s.skip(1)
	}
	n, err := s.d.DecodeBytesLen()
	if err != nil {
		return false, syntax(err)
	}
	at := s.pos()
	if err := s.discard(n); err != nil {
		return false, err
	}
	return string(s.doc[at:at+n]) == name, nil
}

// skip reads the value at the scanner's position, inside depth open maps
// and arrays, checking what it declares against the bytes left.
func (s *scanner) skip(depth int) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch {
	case isMap(c), isArray(c):
		if depth == maxDepth {
			return fmt.Errorf("%w: nested deeper than %d maps and arrays", ErrSyntax, maxDepth)
		}
		var n int
		if isMap(c) {
			n, err = s.mapLen()
			n *= 2
		} else {
			n, err = s.arrayLen()
		}
		if err != nil {
			return err
		}
		for range n {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case msgpcode.IsString(c), msgpcode.IsBin(c):
		n, err := s.d.DecodeBytesLen()
		if err != nil {
			return syntax(err)
		}
		return s.discard(n)
	case msgpcode.IsExt(c):
		_, n, err := s.d.DecodeExtHeader()
		if err != nil {
			return syntax(err)
		}
		return s.discard(n)
	}
	// A scalar of a fixed size (nil, a boolean, a number), or the code
	// MessagePack leaves unused (0xc1), which Skip refuses.
	if err := s.d.Skip(); err != nil {
		return syntax(err)
	}
	return nil
}

// peek returns the code of the next value.
func (s *scanner) peek() (byte, error) {
	c, err := s.d.PeekCode()
	if err != nil {
		return 0, syntax(err)
	}
	return c, nil
}

// mapLen reads a map header; each entry takes two bytes at least.
func (s *scanner) mapLen() (int, error) {
	n, err := s.d.DecodeMapLen()
	if err != nil {
		return 0, syntax(err)
	}
	if n < 0 || n > s.r.Len()/2 {
		return 0, fmt.Errorf("%w: a map of %d entries in %d bytes", ErrSyntax, uint32(n), s.r.Len())
	}
	return n, nil
}

// arrayLen reads an array header; each element takes a byte at least.
func (s *scanner) arrayLen() (int, error) {
	n, err := s.d.DecodeArrayLen()
	if err != nil {
		return 0, syntax(err)
	}
	if n < 0 || n > s.r.Len() {
		return 0, fmt.Errorf("%w: an array of %d elements in %d bytes", ErrSyntax, uint32(n), s.r.Len())
	}
	return n, nil
}

// discard moves past the n bytes of a string, binary or extension value.
func (s *scanner) discard(n int) error {
	if n < 0 || n > s.r.Len() {
		return fmt.Errorf("%w: %d bytes declared, %d left", ErrSyntax, uint32(n), s.r.Len())
	}
	_, err := s.r.Seek(int64(n), io.SeekCurrent)
	return err
}

// syntax wraps a Decoder error as ErrSyntax; running out of bytes is said
// plainly.
func syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the value ends early", ErrSyntax)
	}
	return fmt.Errorf("%w: %w", ErrSyntax, err)
}

func isMap(c byte) bool {
	return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32
}

func isArray(c byte) bool {
	return msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
}
