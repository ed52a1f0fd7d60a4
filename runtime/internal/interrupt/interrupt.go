// Package interrupt provides the rewriting of a WebAssembly binary that lets
// its host stop a running call cheaply, and lets the Go runtime stop the
// world while the call runs.
//
// Instrument adds two mutable i32 globals, the interrupt flag (exported as
// FlagExport) and a fuel counter (FuelExport), a function that refills the
// fuel ($refuel, below), and a check at every loop header and at the entry of
// every function that calls (see instrumentCode for why the others need
// none):
//
//	global.get $fuel
//	i32.const 1
//	i32.sub
//	global.set $fuel
//	global.get $fuel
//	i32.eqz
//	if
//	  call $refuel
//	end
//
// $refuel exits to Go (memory.grow 0 returns to the Go side of wazero, a
// point where the goroutine can be preempted), traps with unreachable if the
// flag is set, and sets the fuel back to Fuel. To stop a call, the host sets
// the flag to 1 and the fuel to 1 (api.MutableGlobal.Set): the guest traps at
// its next check, the next iteration of a loop or call of a function that
// calls. A module is never used after such a trap:
// the host discards the instance, and a new one starts with the flag at 0.
//
// # Why not wazero's mechanism
//
// wazero's own (RuntimeConfig.WithCloseOnContextDone) compiles into every
// loop header an indirect call that exits to Go to look at the module's exit
// code: 20–40 ns per loop iteration. The check above is a load, a
// subtraction, a store and a branch: about a nanosecond.
//
// # Why a fuel counter and not just the flag
//
// Go cannot preempt a goroutine while it runs compiled Wasm code (the
// preemption signal finds no Go code to stop at). A guest that tests only a
// flag never returns to Go while it loops, so a garbage collection that
// starts meanwhile waits for it, with every other goroutine stopped, the
// host's watchdog included: an endless loop would hang the whole process
// rather than be stopped. The fuel makes every guest return to Go at least
// once every Fuel checks.
//
// Bulk memory instructions (memory.fill, memory.copy, memory.init) are
// charged by their byte count, a unit of fuel per KiB, through a call of an
// added function $charge inserted before each (see appendCharge): a loop
// whose iterations each move megabytes returns to Go as often as one of
// small steps.
//
// The rewrite keeps every existing index (type, function, global, table,
// memory) and every instruction: it only inserts code and appends two types,
// two functions, two globals, exports and, if the module has none, a memory; it
// moves a start function (see StartExport). Custom sections that point into
// the code section by offset (DWARF ".debug_*", "metadata.code.*") are
// dropped, since their offsets would be wrong.
package interrupt

import (
	"errors"
	"fmt"
	"strings"
)

// Names of the exports Instrument adds. A module that already exports one of
// them is refused.
const (
	// FlagExport is the interrupt flag, a mutable i32 global.
	FlagExport = "eddy.interrupt"
	// FuelExport is the fuel counter, a mutable i32 global: checks left
	// before the guest returns to Go (and looks at the flag).
	FuelExport = "eddy.fuel"
	// StartExport is the module's start function, when it has one. A start
	// function runs inside instantiation, where the host cannot reach the
	// flag yet; so the start section is removed and the host calls this
	// export right after instantiation, before any other, as the start
	// section would have.
	StartExport = "eddy.start"
)

// Version numbers the way Instrument rewrites modules: the runtime caches
// rewritten modules under it. Change it whenever the output of Instrument
// changes (TestVersion holds the rewrite of a few modules to it).
const Version = 2

// Fuel is how many checks (loop iterations and calls) a guest runs between
// two returns to Go: about 65 µs in a loop that does nothing, and a return
// to Go costs about 100 ns.
const Fuel = 1 << 16

// Module is an instrumented module.
type Module struct {
	Wasm      []byte // the instrumented binary
	Start     bool   // the module had a start section, now exported as StartExport
	Functions int    // functions checked at entry (those that call)
	Loops     int    // loop headers checked
	Bulk      int    // bulk memory instructions charged ($charge)
}

// ErrUnsupported is wrapped by the errors of Instrument for modules that are
// well formed as far as it can tell but use something it does not handle: an
// unknown opcode or section, types other than function types (GC), memory64,
// several memories, more than 50,000 locals in a function; or that are over
// one of the bounds on code that keep compiling cheap (blocks nested deeper
// than 10,000, a br_table of more than 65,520 labels, more than 1,000,000
// functions, a function body over 7,654,321 bytes; IsLimit tells those).
var ErrUnsupported = errors.New("unsupported")

// IsLimit reports whether err is Instrument refusing a module for one of the
// bounds on code (see ErrUnsupported).
func IsLimit(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.limit
}

// Error says where in the module Instrument gave up and why.
type Error struct {
	Offset int // byte offset in the original module
	Msg    string
	Err    error // ErrUnsupported, or nil for a malformed module
	limit  bool  // one of the bounds on code (IsLimit)
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("offset %#x: %v: %s", e.Offset, e.Err, e.Msg)
	}
	return fmt.Sprintf("offset %#x: %s", e.Offset, e.Msg)
}

// Unwrap returns ErrUnsupported or nil.
func (e *Error) Unwrap() error { return e.Err }

// Section ids (Wasm core 3.0, section 5.5).
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank orders the non-custom sections as the binary format requires
// (the tag section sits between memory and global).
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11, secCode: 12, secData: 13,
}

// section is one section of the original module.
type section struct {
	id      byte
	off     int // of its id byte
	content int // of its content
	end     int
}

// layout is what Instrument learns of a module before rewriting it.
type layout struct {
	sections        []section
	types           uint32 // defined function types
	importedFuncs   uint32
	funcs           uint32 // defined functions
	importedGlobals uint32
	globals         uint32 // defined globals
	memories        uint32 // imported and defined
	start           int    // the start function's index, or -1
}

// Instrument returns a copy of wasm with the interrupt flag, the fuel and
// their checks. It does not validate the module (the compiler does that
// afterwards), but it never reads out of bounds: a malformed module gives an
// *Error, as does one that uses something it does not know (ErrUnsupported),
// naming the opcode or section and its offset.
func Instrument(wasm []byte) (*Module, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, &Error{Offset: 0, Msg: "not a WebAssembly binary (no \\0asm magic)"}
	}
	if string(wasm[4:8]) != "\x01\x00\x00\x00" {
		return nil, &Error{Offset: 4, Msg: fmt.Sprintf("binary format version %x, want 01000000", wasm[4:8]), Err: ErrUnsupported}
	}
	if uint64(len(wasm)) >= 1<<32-1<<20 {
		return nil, &Error{Offset: 0, Msg: "module of 4 GiB or more", Err: ErrUnsupported}
	}
	l, err := scan(wasm)
	if err != nil {
		return nil, err
	}
	return l.write(wasm)
}

// scan finds the sections and counts what the rewrite appends to.
func scan(wasm []byte) (*layout, error) {
	l := &layout{start: -1}
	lastRank := 0
	r := &reader{b: wasm, p: 8}
	for r.p < len(wasm) {
		off := r.p
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return nil, r.err
		}
		if uint64(size) > uint64(len(wasm)-r.p) {
			return nil, &Error{Offset: off, Msg: fmt.Sprintf("section %d of %d bytes runs past the end of the module", id, size)}
		}
		s := section{id: id, off: off, content: r.p, end: r.p + int(size)}
		r.p = s.end
		l.sections = append(l.sections, s)
		c := &reader{b: wasm[:s.end], p: s.content}
		if id == secCustom {
			c.name()
			if c.err != nil {
				return nil, c.err
			}
			continue
		}
		if int(id) >= len(sectionRank) || sectionRank[id] == 0 {
			return nil, &Error{Offset: off, Msg: fmt.Sprintf("unknown section id %d", id), Err: ErrUnsupported}
		}
		if sectionRank[id] <= lastRank {
			return nil, &Error{Offset: off, Msg: fmt.Sprintf("section %d out of order or repeated", id)}
		}
		lastRank = sectionRank[id]
		if id == secStart {
			l.start = int(c.u32())
			if c.err != nil {
				return nil, c.err
			}
			continue
		}
		if id == secDataCount {
			continue
		}
		// Every other section is a vector. A count larger than the bytes
		// left cannot be right, and a compiler that allocates for it before
		// reading the entries (wazero does) would exhaust memory.
		n := c.vecLen()
		if c.err != nil {
			return nil, c.err
		}
		var err error
		switch id {
		case secType:
			l.types = n
			err = scanTypes(c, n)
		case secImport:
			l.importedFuncs, l.importedGlobals, l.memories, err = scanImports(c, n)
		case secFunction:
			l.funcs = n
		case secMemory:
			l.memories += n
			err = scanMemories(c, n)
		case secGlobal:
			l.globals = n
		case secExport:
			err = scanExports(c, n)
		}
		if err != nil {
			return nil, err
		}
	}
	if l.memories > 1 {
		return nil, &Error{Offset: 8, Msg: fmt.Sprintf("%d memories (multi-memory)", l.memories), Err: ErrUnsupported}
	}
	return l, nil
}

// scanTypes refuses types other than function types (GC proposal).
func scanTypes(r *reader, n uint32) error {
	for i := uint32(0); i < n && r.err == nil; i++ {
		at := r.p
		if form := r.byte(); form != 0x60 && r.err == nil {
			return r.unsupported(at, fmt.Sprintf("type form %#x (only function types, 0x60)", form))
		}
		for j := 0; j < 2; j++ { // parameters, results
			m := r.vecLen()
			for k := uint32(0); k < m && r.err == nil; k++ {
				r.valType()
			}
		}
	}
	return r.err
}

// scanImports counts the imported functions, globals and memories.
func scanImports(r *reader, n uint32) (funcs, globals, memories uint32, err error) {
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.name() // module
		r.name() // name
		at := r.p
		switch kind := r.byte(); kind {
		case 0x00: // function: type index
			r.u32()
			funcs++
		case 0x01: // table: reference type, limits
			r.valType()
			r.limits()
		case 0x02: // memory: limits
			if r.limits()&0x04 != 0 {
				return 0, 0, 0, r.unsupported(at, "memory64")
			}
			memories++
		case 0x03: // global: value type, mutability
			r.valType()
			r.byte()
			globals++
		case 0x04: // tag: attribute, type index
			r.byte()
			r.u32()
		default:
			if r.err == nil {
				return 0, 0, 0, r.unsupported(at, fmt.Sprintf("import kind %#x", kind))
			}
		}
	}
	return funcs, globals, memories, r.err
}

// scanMemories refuses 64-bit memories.
func scanMemories(r *reader, n uint32) error {
	for i := uint32(0); i < n && r.err == nil; i++ {
		at := r.p
		if r.limits()&0x04 != 0 {
			return r.unsupported(at, "memory64")
		}
	}
	return r.err
}

// scanExports refuses the names reserved for the host.
func scanExports(r *reader, n uint32) error {
	for i := uint32(0); i < n && r.err == nil; i++ {
		at := r.p
		name := r.name()
		r.byte() // kind
		r.u32()  // index
		if r.err == nil && (name == FlagExport || name == FuelExport || name == StartExport) {
			return &Error{Offset: at, Msg: fmt.Sprintf("the module exports %q, a name reserved for the host", name)}
		}
	}
	return r.err
}

// write writes the instrumented module.
func (l *layout) write(wasm []byte) (*Module, error) {
	m := &Module{Start: l.start >= 0}
	ix := indexes{
		globals:    l.importedGlobals + l.globals,
		funcs:      l.importedFuncs + l.funcs,
		refuelType: l.types,
		refuel:     l.importedFuncs + l.funcs,
		chargeType: l.types + 1,
		charge:     l.importedFuncs + l.funcs + 1,
		flag:       l.importedGlobals + l.globals,
		fuel:       l.importedGlobals + l.globals + 1,
	}
	// The sections to change, or to add when absent (c nil). Each appends to
	// a vector: its count and entries are the original ones, then the new
	// entries. c holds the module up to the section's end; p is where its
	// content starts.
	edits := map[byte]func(c []byte, p int) ([]byte, error){
		secType: func(c []byte, p int) ([]byte, error) {
			return appendVec(nil, c[p:], 2, 0x60, 0x00, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f), nil // () -> (), (i32) -> (i32)
		},
		secFunction: func(c []byte, p int) ([]byte, error) {
			return appendVec(nil, c[p:], 2, append(appendU32(nil, ix.refuelType), appendU32(nil, ix.chargeType)...)...), nil
		},
		secGlobal: func(c []byte, p int) ([]byte, error) {
			b := []byte{0x7f, 0x01, 0x41, 0x00, 0x0b} // flag: (mut i32) (i32.const 0)
			b = append(b, 0x7f, 0x01, 0x41)           // fuel: (mut i32) (i32.const Fuel)
			b = appendS32(b, Fuel)
			b = append(b, 0x0b)
			return appendVec(nil, c[p:], 2, b...), nil
		},
		secExport: func(c []byte, p int) ([]byte, error) {
			b := appendName(nil, FlagExport)
			b = append(b, 0x03) // a global
			b = appendU32(b, ix.flag)
			b = appendName(b, FuelExport)
			b = append(b, 0x03)
			b = appendU32(b, ix.fuel)
			n := uint32(2)
			if l.start >= 0 {
				b = appendName(b, StartExport)
				b = append(b, 0x00) // a function
				b = appendU32(b, uint32(l.start))
				n++
			}
			return appendVec(nil, c[p:], n, b...), nil
		},
		secCode: func(c []byte, p int) ([]byte, error) {
			return instrumentCode(c, p, ix, m)
		},
	}
	if l.memories == 0 {
		// $refuel's memory.grow needs a memory: an empty one.
		edits[secMemory] = func(c []byte, p int) ([]byte, error) {
			return appendVec(nil, c[p:], 1, 0x00, 0x00), nil
		}
	}
	out := make([]byte, 0, len(wasm)+len(wasm)/4+256)
	out = append(out, wasm[:8]...)
	// flush writes the sections to add that rank before rank.
	flush := func(rank int) error {
		for _, id := range [...]byte{secType, secFunction, secMemory, secGlobal, secExport, secCode} {
			edit, ok := edits[id]
			if !ok || sectionRank[id] >= rank {
				continue
			}
			content, err := edit(nil, 0)
			if err != nil {
				return err
			}
			out = appendSection(out, id, content)
			delete(edits, id)
		}
		return nil
	}
	for _, s := range l.sections {
		if s.id == secCustom {
			cr := &reader{b: wasm[:s.end], p: s.content}
			name := cr.name()
			if !strings.HasPrefix(name, ".debug_") && !strings.HasPrefix(name, "metadata.code.") {
				out = append(out, wasm[s.off:s.end]...)
			}
			continue
		}
		if err := flush(sectionRank[s.id]); err != nil {
			return nil, err
		}
		switch edit, ok := edits[s.id]; {
		case ok:
			content, err := edit(wasm[:s.end], s.content)
			if err != nil {
				return nil, err
			}
			out = appendSection(out, s.id, content)
			delete(edits, s.id)
		case s.id == secStart:
			// Dropped: exported as StartExport instead.
		default:
			out = append(out, wasm[s.off:s.end]...)
		}
	}
	if err := flush(len(sectionRank) + 1); err != nil {
		return nil, err
	}
	m.Wasm = out
	return m, nil
}

// appendVec appends to b a vector: the entries of the vector content (empty
// for none) and n more entries, entries.
func appendVec(b, content []byte, n uint32, entries ...byte) []byte {
	var count uint32
	if len(content) > 0 {
		r := &reader{b: content}
		count = r.u32() // read without error by scan
		content = content[r.p:]
	}
	b = appendU32(b, count+n)
	b = append(b, content...)
	return append(b, entries...)
}

func appendSection(out []byte, id byte, content []byte) []byte {
	out = append(out, id)
	out = appendU32(out, uint32(len(content)))
	return append(out, content...)
}

func appendName(b []byte, name string) []byte {
	b = appendU32(b, uint32(len(name)))
	return append(b, name...)
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS32 appends a signed LEB128.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
