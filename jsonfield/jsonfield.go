// Package jsonfield finds a member of a JSON document by a dotted path
// without decoding the document: it scans the bytes, skipping the values it
// does not need. Pipelines use it per record (key_by fields, event-time
// fields), where decoding every value into maps cost tens of allocations.
//
// It checks the whole document as strictly as encoding/json does (one JSON
// value, nothing after it but white space) in the same single pass that
// skips the values it does not need, so that a record whose value is not
// JSON fails where its field is read, not later in a step that parses it
// whole.
package jsonfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Errors, wrapped with the path.
var (
	ErrSyntax    = errors.New("not valid JSON")
	ErrNotObject = errors.New("is not a JSON object")
	ErrMissing   = errors.New("is missing")
)

// Path is a dotted member path, such as "user.id".
type Path []string

// Parse splits a dotted path; an empty segment is an error.
func Parse(path string) (Path, error) {
	parts := strings.Split(path, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%q: empty path segment", path)
		}
	}
	return parts, nil
}

func (p Path) String() string { return strings.Join(p, ".") }

// Find returns the raw JSON value at the path in doc (a string with its
// quotes), without surrounding white space. The last of repeated members
// counts, as in encoding/json. doc must be one JSON value, with white
// space around it at most: trailing bytes (`{"a":1}}x`) are ErrSyntax, as
// is anything encoding/json would not parse.
func (p Path) Find(doc []byte) ([]byte, error) {
	v := doc
	for i, name := range p {
		v = trimSpace(v)
		if len(v) == 0 || v[0] != '{' {
			where := "the value"
			if i > 0 {
				where = strings.Join(p[:i], ".")
			}
			return nil, fmt.Errorf("%s %w", where, ErrNotObject)
		}
		m, end, err := member(v, name)
		if err == nil && i == 0 && end != len(v) {
			// The members below were checked whole by skipValue; the
			// document itself must end with its object.
			err = fmt.Errorf("%d bytes after the value: %w", len(v)-end, ErrSyntax)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Join(p[:i+1], "."), err)
		}
		if m == nil {
			return nil, fmt.Errorf("field %s %w", strings.Join(p[:i+1], "."), ErrMissing)
		}
		v = m
	}
	return trimSpace(v), nil
}

// String returns the Go string of a raw JSON string value.
func String(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// member returns the value of the last member called name of the object
// obj (which starts with '{'), or nil, and the index after the object.
func member(obj []byte, name string) (found []byte, end int, err error) {
	i := ws(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return nil, i + 1, nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil, 0, ErrSyntax
		}
		end, err := skipString(obj, i)
		if err != nil {
			return nil, 0, err
		}
		key := obj[i:end]
		i = ws(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, 0, ErrSyntax
		}
		start := ws(obj, i+1)
		vend, err := skipValue(obj, start)
		if err != nil {
			return nil, 0, err
		}
		if matches(key, name) {
			found = obj[start:vend]
		}
		i = ws(obj, vend)
		if i >= len(obj) {
			return nil, 0, ErrSyntax
		}
		switch obj[i] {
		case ',':
			i = ws(obj, i+1)
		case '}':
			return found, i + 1, nil
		default:
			return nil, 0, ErrSyntax
		}
	}
}

// matches compares a raw member name (with quotes) to name.
func matches(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == name
	}
	s, err := String(raw)
	return err == nil && s == name
}

// trimSpace cuts JSON's white space (space, tab, line feed, carriage
// return) from both ends of b; bytes.TrimSpace would cut more (a vertical
// tab, a form feed, Unicode spaces), which JSON does not allow.
func trimSpace(b []byte) []byte {
	b = b[ws(b, 0):]
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// ws returns the index of the first byte from i on that is not JSON's
// white space.
func ws(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// maxDepth bounds the nesting of arrays and objects, as encoding/json
// does (10000): deeper input is refused rather than followed by recursion.
const maxDepth = 10000

// skipString returns the index after the string starting at b[i] == '"',
// checking it as encoding/json does: no control characters, valid
// escapes. (Like encoding/json, it lets invalid UTF-8 through.)
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return 0, ErrSyntax
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, ErrSyntax
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return 0, ErrSyntax
				}
				i += 4
			default:
				return 0, ErrSyntax
			}
		}
	}
	return 0, ErrSyntax
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// skipValue returns the index after the value starting at b[i], a member
// of the document's object (one level of nesting), checking it as strictly
// as encoding/json does.
func skipValue(b []byte, i int) (int, error) { return skip(b, i, 1) }

// skip is skipValue inside depth open arrays and objects.
func skip(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth == maxDepth {
			return 0, ErrSyntax
		}
		return skipContainer(b, i, depth+1)
	case c == '-' || '0' <= c && c <= '9':
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, ErrSyntax
}

// skipContainer returns the index after the object or array at b[i].
func skipContainer(b []byte, i, depth int) (int, error) {
	obj := b[i] == '{'
	end := byte(']')
	if obj {
		end = '}'
	}
	i = ws(b, i+1)
	if i < len(b) && b[i] == end {
		return i + 1, nil
	}
	for {
		var err error
		if obj {
			if i >= len(b) || b[i] != '"' {
				return 0, ErrSyntax
			}
			if i, err = skipString(b, i); err != nil {
				return 0, err
			}
			if i = ws(b, i); i >= len(b) || b[i] != ':' {
				return 0, ErrSyntax
			}
			i = ws(b, i+1)
		}
		if i, err = skip(b, i, depth); err != nil {
			return 0, err
		}
		switch i = ws(b, i); {
		case i >= len(b):
			return 0, ErrSyntax
		case b[i] == end:
			return i + 1, nil
		case b[i] != ',':
			return 0, ErrSyntax
		}
		i = ws(b, i+1)
	}
}

// skipNumber returns the index after the number at b[i]: -?int frac? exp?
// as JSON has them (no leading zeros, no '+', digits after '.' and 'e').
func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, ErrSyntax
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, ErrSyntax
		}
		i = j
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, ErrSyntax
	}
	return i + len(lit), nil
}
