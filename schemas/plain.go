package schemas

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
)

// plainOut receives one value as a decoder walks a record: JSON text
// written as it goes (jsonOut, the common case: no value tree), or a tree
// of Go values (treeOut) for msgpack.
type plainOut interface {
	null()
	boolean(bool)
	integer(int64)
	unsigned(uint64)
	float(float64)
	str(string)
	bin([]byte)
	beginObject()
	key(string)
	beginArray()
	end()
	err() error
}

// jsonOut appends JSON as encoding/json writes it (bytes in base64, floats
// in the shortest form, exponent from 1e21 and below 1e-6), without HTML
// escapes.
type jsonOut struct {
	b        []byte
	open     []jsonFrame
	afterKey bool // a key was written: its value needs no comma
	bad      error
}

var jsonOuts = sync.Pool{New: func() any { return new(jsonOut) }}

// reset makes o write after dst, with nothing open.
func (o *jsonOut) reset(dst []byte) {
	o.b, o.open, o.afterKey, o.bad = dst, o.open[:0], false, nil
}

type jsonFrame struct {
	closer byte // '}' or ']'
	first  bool // no element written yet
}

// sep writes the comma before a value or key, when one is needed.
func (o *jsonOut) sep() {
	if o.afterKey {
		o.afterKey = false
		return
	}
	if n := len(o.open); n > 0 {
		if !o.open[n-1].first {
			o.b = append(o.b, ',')
		}
		o.open[n-1].first = false
	}
}

func (o *jsonOut) null()             { o.sep(); o.b = append(o.b, "null"...) }
func (o *jsonOut) boolean(v bool)    { o.sep(); o.b = strconv.AppendBool(o.b, v) }
func (o *jsonOut) integer(v int64)   { o.sep(); o.b = strconv.AppendInt(o.b, v, 10) }
func (o *jsonOut) unsigned(v uint64) { o.sep(); o.b = strconv.AppendUint(o.b, v, 10) }
func (o *jsonOut) float(v float64) {
	o.sep()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if o.bad == nil {
			o.bad = errors.New("a NaN or infinite number has no JSON form")
		}
		o.b = append(o.b, '0')
		return
	}
	o.b = appendFloat(o.b, v)
}
func (o *jsonOut) str(v string) { o.sep(); o.b = appendJSONString(o.b, v) }
func (o *jsonOut) bin(v []byte) {
	o.sep()
	o.b = append(base64.StdEncoding.AppendEncode(append(o.b, '"'), v), '"')
}
func (o *jsonOut) beginObject() {
	o.sep()
	o.b = append(o.b, '{')
	o.open = append(o.open, jsonFrame{closer: '}', first: true})
}
func (o *jsonOut) beginArray() {
	o.sep()
	o.b = append(o.b, '[')
	o.open = append(o.open, jsonFrame{closer: ']', first: true})
}
func (o *jsonOut) key(k string) {
	o.sep()
	o.b = append(appendJSONString(o.b, k), ':')
	o.afterKey = true
}
func (o *jsonOut) end() {
	n := len(o.open) - 1
	o.b = append(o.b, o.open[n].closer)
	o.open = o.open[:n]
}
func (o *jsonOut) err() error { return o.bad }

// appendFloat appends f as encoding/json writes a float64.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// with HTML escaping off (invalid UTF-8 as U+FFFD).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}

// treeOut builds the value as Go values: maps, slices, strings, int64,
// uint64, float64, bool, []byte, nil.
type treeOut struct {
	stack []frame
	root  any
}

type frame struct {
	obj map[string]any
	arr []any
	key string
}

func (o *treeOut) put(v any) {
	if len(o.stack) == 0 {
		o.root = v
		return
	}
	f := &o.stack[len(o.stack)-1]
	if f.obj != nil {
		f.obj[f.key] = v
	} else {
		f.arr = append(f.arr, v)
	}
}

func (o *treeOut) null()             { o.put(nil) }
func (o *treeOut) boolean(v bool)    { o.put(v) }
func (o *treeOut) integer(v int64)   { o.put(v) }
func (o *treeOut) unsigned(v uint64) { o.put(v) }
func (o *treeOut) float(v float64)   { o.put(v) }
func (o *treeOut) str(v string)      { o.put(v) }
func (o *treeOut) bin(v []byte)      { o.put(append([]byte{}, v...)) }
func (o *treeOut) beginObject()      { o.stack = append(o.stack, frame{obj: map[string]any{}}) }
func (o *treeOut) beginArray()       { o.stack = append(o.stack, frame{arr: []any{}}) }
func (o *treeOut) key(k string)      { o.stack[len(o.stack)-1].key = k }
func (o *treeOut) end() {
	f := o.stack[len(o.stack)-1]
	o.stack = o.stack[:len(o.stack)-1]
	if f.obj != nil {
		o.put(f.obj)
	} else {
		o.put(f.arr)
	}
}
func (o *treeOut) err() error { return nil }
