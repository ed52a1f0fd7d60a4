package interrupt

import "fmt"

// reader decodes a module. Its first error sticks: later reads return zero
// values and leave the error alone, so a decoder checks r.err once per
// entry, not once per read, and loops over counts stop at the first error.
type reader struct {
	b   []byte
	p   int
	err error
}

func (r *reader) fail(at int, msg string) {
	if r.err == nil {
		r.err = &Error{Offset: at, Msg: msg}
	}
}

func (r *reader) unsupported(at int, what string) error {
	if r.err == nil {
		r.err = &Error{Offset: at, Msg: what, Err: ErrUnsupported}
	}
	return r.err
}

// overLimit records a bound on code the module is over (IsLimit).
func (r *reader) overLimit(at int, what string) {
	if r.err == nil {
		r.err = &Error{Offset: at, Msg: what, Err: ErrUnsupported, limit: true}
	}
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.p >= len(r.b) {
		r.fail(r.p, "unexpected end")
		return 0
	}
	c := r.b[r.p]
	r.p++
	return c
}

func (r *reader) skip(n int) {
	if r.err != nil {
		return
	}
	if n > len(r.b)-r.p {
		r.fail(r.p, "unexpected end")
		return
	}
	r.p += n
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *reader) u32() uint32 {
	// One byte: most. (After an error the value does not matter: callers
	// check r.err before they use what they read.)
	if p := r.p; p < len(r.b) && r.b[p] < 0x80 {
		r.p = p + 1
		return uint32(r.b[p])
	}
	return r.u32Long()
}

func (r *reader) u32Long() uint32 {
	if r.err != nil {
		return 0
	}
	at := r.p
	var v uint32
	for shift := 0; ; shift += 7 {
		if r.p >= len(r.b) {
			r.fail(at, "unexpected end in an integer")
			return 0
		}
		c := r.b[r.p]
		r.p++
		if shift == 28 && c > 0x0f {
			r.fail(at, "integer too large for 32 bits")
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

// vecLen reads the length of a vector whose entries take at least a byte
// each: one longer than the bytes left is an error.
func (r *reader) vecLen() uint32 {
	at := r.p
	n := r.u32()
	if r.err == nil && uint64(n) > uint64(len(r.b)-r.p) {
		r.fail(at, fmt.Sprintf("vector of %d entries in %d bytes", n, len(r.b)-r.p))
		return 0
	}
	return n
}

// leb skips a LEB128 integer of at most n bytes (5 for 32 and 33 bits, 10
// for 64 bits). Its value is not needed: the instruction is copied as is.
func (r *reader) leb(n int) {
	if p := r.p; p < len(r.b) && r.b[p] < 0x80 { // one byte: most
		r.p = p + 1
		return
	}
	r.lebLong(n)
}

func (r *reader) lebLong(n int) {
	if r.err != nil {
		return
	}
	at := r.p
	for i := 0; i < n; i++ {
		if r.p >= len(r.b) {
			r.fail(at, "unexpected end in an integer")
			return
		}
		c := r.b[r.p]
		r.p++
		if c < 0x80 {
			return
		}
	}
	r.fail(at, "integer too long")
}

func (r *reader) name() string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	if uint64(n) > uint64(len(r.b)-r.p) {
		r.fail(r.p, "name runs past its section")
		return ""
	}
	s := string(r.b[r.p : r.p+int(n)])
	r.p += int(n)
	return s
}

// limits reads table or memory limits and returns their flags.
func (r *reader) limits() byte {
	flags := r.byte()
	n := 5
	if flags&0x04 != 0 { // 64-bit
		n = 10
	}
	r.leb(n)
	if flags&0x01 != 0 {
		r.leb(n)
	}
	return flags
}

// heapType reads a heap type: an abstract one in one byte, or a type index
// (s33).
func (r *reader) heapType() {
	if r.err != nil {
		return
	}
	if r.p < len(r.b) && r.b[r.p] >= 0x40 && r.b[r.p] < 0x80 {
		r.p++
		return
	}
	r.leb(5)
}

// valType reads a value type: one byte, or (ref null? ht) of the typed
// function references proposal.
func (r *reader) valType() {
	switch r.byte() {
	case 0x63, 0x64:
		r.heapType()
	}
}

// blockType reads a block type: empty (0x40), a value type, or a type index
// (s33, non-negative).
func (r *reader) blockType() {
	if r.err != nil {
		return
	}
	if r.p < len(r.b) && r.b[r.p] >= 0x40 && r.b[r.p] < 0x80 {
		r.valType()
		return
	}
	r.leb(5)
}

// memArg reads a memory instruction's alignment (with the multi-memory
// index when its bit 6 is set) and offset.
func (r *reader) memArg() {
	if r.u32()&0x40 != 0 {
		r.u32()
	}
	r.leb(10)
}

func (r *reader) unknown(at int, opcode string) {
	r.unsupported(at, fmt.Sprintf("unknown opcode %s", opcode))
}
