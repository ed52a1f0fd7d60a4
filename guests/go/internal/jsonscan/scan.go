package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// scan validates doc as one JSON value (with optional surrounding
// whitespace). With match set it also returns the raw value of the last
// top-level member called name when doc is an object. object reports whether
// the value is an object.
//
// # Why it is one function
//
// Go compiled to Wasm pays some 25 ns for a call and a few ns for every loop
// iteration, so this is a single state machine with an explicit stack rather
// than a recursive descent parser, and the contents of strings, which are
// most of the bytes of typical JSON, are skipped eight bytes at a time.
func scan(doc []byte, name string, match bool) (value []byte, found, object, ok bool) {
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' per open container
	n := len(doc)
	i := ws(doc, 0)
	if i < n {
		object = doc[i] == '{'
	}
	var valStart int // where the value of a matching member starts
	var isMatch bool // the value being read belongs to a matching member
	var key []byte   // raw text of the last key read
	var escaped bool // key holds escapes

value: // a value starts at i
	if i >= n {
		return nil, false, false, false
	}
	switch c := doc[i]; {
	case c == '{' || c == '[':
		if len(stack) >= MaxDepth {
			return nil, false, false, false
		}
		stack = append(stack, c)
		if i++; i < n && doc[i] <= ' ' {
			i = ws(doc, i)
		}
		if i >= n {
			return nil, false, false, false
		}
		if doc[i] == c+2 { // '}' or ']'
			stack = stack[:len(stack)-1]
			i++
			goto after
		}
		if c == '{' {
			goto member
		}
		goto value
	case c == '"':
		if i, escaped = skipString(doc, i+1); i < 0 {
			return nil, false, false, false
		}
	case c == 't':
		if n-i < 4 || string(doc[i:i+4]) != "true" {
			return nil, false, false, false
		}
		i += 4
	case c == 'f':
		if n-i < 5 || string(doc[i:i+5]) != "false" {
			return nil, false, false, false
		}
		i += 5
	case c == 'n':
		if n-i < 4 || string(doc[i:i+4]) != "null" {
			return nil, false, false, false
		}
		i += 4
	default:
		if i = skipNumber(doc, i); i < 0 {
			return nil, false, false, false
		}
	}

after: // a value ended just before i
	if isMatch && len(stack) == 1 {
		value, found, isMatch = doc[valStart:i], true, false
	}
	if i < n && doc[i] <= ' ' {
		i = ws(doc, i)
	}
	if len(stack) == 0 {
		return value, found, object, i == n
	}
	if i >= n {
		return nil, false, false, false
	}
	switch top := stack[len(stack)-1]; doc[i] {
	case ',':
		if i++; i < n && doc[i] <= ' ' {
			i = ws(doc, i)
		}
		if top == '{' {
			goto member
		}
		goto value
	case top + 2: // '}' or ']'
		stack = stack[:len(stack)-1]
		i++
		goto after
	}
	return nil, false, false, false

member: // a member "key": value starts at i
	if i >= n || doc[i] != '"' {
		return nil, false, false, false
	}
	{
		start := i + 1
		if i, escaped = skipString(doc, start); i < 0 {
			return nil, false, false, false
		}
		key = doc[start : i-1]
	}
	if i < n && doc[i] <= ' ' {
		i = ws(doc, i)
	}
	if i >= n || doc[i] != ':' {
		return nil, false, false, false
	}
	if i++; i < n && doc[i] <= ' ' {
		i = ws(doc, i)
	}
	if match && len(stack) == 1 && keyEquals(key, escaped, name) {
		valStart, isMatch = i, true
	}
	goto value
}

// ws returns the index of the first non-whitespace byte at or after i.
func ws(doc []byte, i int) int {
	for i < len(doc) {
		switch doc[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

const (
	ones    = 0x0101010101010101
	high    = 0x8080808080808080
	quotes  = '"' * ones
	slashes = '\\' * ones
)

// skipString skips the contents of a string that starts at i (just after the
// opening quote) and returns the index after the closing quote, and whether
// the string holds escapes; -1 if the string is not valid.
func skipString(doc []byte, i int) (int, bool) {
	escaped := false
	for {
		// Eight bytes at a time to the first '"', '\\' or control byte:
		// (x - 0x01…) &^ x & 0x80… marks zero bytes (exactly, up to the
		// first one), (x - 0x20…) &^ x & 0x80… bytes below 0x20.
		for len(doc)-i >= 8 {
			x := binary.LittleEndian.Uint64(doc[i:])
			q, s := x^quotes, x^slashes
			m := ((q - ones) &^ q) | ((s - ones) &^ s) | ((x - 0x20*ones) &^ x)
			if m &= high; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(doc) {
			return -1, false
		}
		switch c := doc[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			if i+1 >= len(doc) {
				return -1, false
			}
			switch doc[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(doc) || !isHex4(doc[i+2:i+6]) {
					return -1, false
				}
				i += 6
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		default:
			i++
		}
	}
}

// skipNumber skips a number at i and returns the index after it, or -1.
func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
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
			return -1
		}
		i = j
	}
	return i
}
