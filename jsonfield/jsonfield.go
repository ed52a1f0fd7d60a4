// Package jsonfield finds a member of a JSON document by a dotted path
// without decoding the document: it scans the bytes, skipping the values it
// does not need. Pipelines use it per record (key_by fields, event-time
// fields), where decoding every value into maps cost tens of allocations.
//
// It checks the structure it walks through (objects, strings, nesting) and
// reports malformed input, but it does not validate the values it skips
// over as strictly as encoding/json does; the value it returns is checked
// by its caller's decoding (String, or the caller's parsing).
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
// counts, as in encoding/json.
func (p Path) Find(doc []byte) ([]byte, error) {
	v := doc
	for i, name := range p {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] != '{' {
			where := "the value"
			if i > 0 {
				where = strings.Join(p[:i], ".")
			}
			return nil, fmt.Errorf("%s %w", where, ErrNotObject)
		}
		m, err := member(v, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Join(p[:i+1], "."), err)
		}
		if m == nil {
			return nil, fmt.Errorf("field %s %w", strings.Join(p[:i+1], "."), ErrMissing)
		}
		v = m
	}
	return bytes.TrimSpace(v), nil
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
// obj (which starts with '{'), or nil.
func member(obj []byte, name string) ([]byte, error) {
	var found []byte
	i := ws(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return nil, nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil, ErrSyntax
		}
		end, err := skipString(obj, i)
		if err != nil {
			return nil, err
		}
		key := obj[i:end]
		i = ws(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, ErrSyntax
		}
		start := ws(obj, i+1)
		vend, err := skipValue(obj, start)
		if err != nil {
			return nil, err
		}
		if matches(key, name) {
			found = obj[start:vend]
		}
		i = ws(obj, vend)
		if i >= len(obj) {
			return nil, ErrSyntax
		}
		switch obj[i] {
		case ',':
			i = ws(obj, i+1)
		case '}':
			return found, nil
		default:
			return nil, ErrSyntax
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

func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, ErrSyntax
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, ErrSyntax
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i || !json.Valid(b[i:j]) {
		return 0, ErrSyntax
	}
	return j, nil
}
