package interrupt

import (
	"errors"
	"fmt"
)

// indexes are the module's counts, and the indexes of what Instrument adds.
type indexes struct {
	globals    uint32 // the module's own globals (imported and defined)
	funcs      uint32 // the module's own functions (imported and defined)
	refuelType uint32 // () -> ()
	refuel     uint32 // $refuel
	chargeType uint32 // (i32) -> (i32)
	charge     uint32 // $charge
	flag       uint32 // the interrupt flag
	fuel       uint32 // the fuel counter
}

// appendCheck appends the check made at function entries and loop headers:
// take one unit of fuel; at zero, call $refuel.
func appendCheck(b []byte, ix indexes) []byte {
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, ix.fuel)
	b = append(b, 0x41, 0x01, 0x6b, 0x24) // i32.const 1, i32.sub, global.set fuel
	b = appendU32(b, ix.fuel)
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, ix.fuel)
	b = append(b, 0x45, 0x04, 0x40, 0x10) // i32.eqz, if, call refuel
	b = appendU32(b, ix.refuel)
	return append(b, 0x0b) // end
}

// appendRefuel appends the body of $refuel: return to Go, trap if the flag
// is set, fill the fuel.
func appendRefuel(b []byte, ix indexes) []byte {
	b = append(b, 0x00)                         // no locals
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // drop (memory.grow (i32.const 0))
	b = append(b, 0x23)                         // if (global.get flag) (then unreachable)
	b = appendU32(b, ix.flag)
	b = append(b, 0x04, 0x40, 0x00, 0x0b)
	b = append(b, 0x41) // global.set fuel (i32.const Fuel)
	b = appendS32(b, Fuel)
	b = append(b, 0x24)
	b = appendU32(b, ix.fuel)
	return append(b, 0x0b)
}

// bulkCost is the shift that turns the byte count of a bulk memory
// instruction into the fuel it takes: a unit per KiB. A unit of fuel is one
// check, a loop iteration or a call, a few nanoseconds; a KiB of memory.fill
// or memory.copy takes tens of nanoseconds, so bulk work is charged no less
// than the loops it replaces.
const bulkCost = 10

// appendCharge appends the body of $charge(n) -> n, called before every
// memory.fill, memory.copy and memory.init with their byte count n (which
// it leaves on the stack): take n >> bulkCost units of fuel; at zero or
// below, call $refuel.
//
// # Why
//
// The checks bound the number of loop iterations between returns to Go, not
// their length: a loop whose every iteration fills 127 MiB would return to
// Go once every 65,536 fills, minutes, and a garbage collection starting
// meanwhile would stop the whole process until then. Charging the bytes
// bounds the work between returns to Go to about Fuel KiB (64 MiB) of bulk
// operations plus one operation, itself bounded by the memory limit.
func appendCharge(b []byte, ix indexes) []byte {
	b = append(b, 0x00, 0x23) // no locals; global.get fuel
	b = appendU32(b, ix.fuel)
	b = append(b, 0x20, 0x00, 0x41, bulkCost, 0x76, 0x6b, 0x24) // local.get n, i32.const bulkCost, i32.shr_u, i32.sub, global.set fuel
	b = appendU32(b, ix.fuel)
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, ix.fuel)
	b = append(b, 0x41, 0x01, 0x48, 0x04, 0x40, 0x10) // i32.const 1, i32.lt_s, if, call refuel
	b = appendU32(b, ix.refuel)
	return append(b, 0x0b, 0x20, 0x00, 0x0b) // end, local.get n, end
}

// instrumentCode returns the content of the code section found at b[p:] (b
// ends with the section; nil when the module has none) with the check
// inserted after the block type of every loop and at the entry of every
// function that calls, and $refuel's body appended.
//
// A function that neither loops nor calls runs a bounded number of
// instructions, so it needs no check: an endless run is endless iterations
// of a loop (checked at its header) or endless calls. A function invocation
// makes a bounded number of calls outside its loops, so endless calls are
// endless invocations of functions that call, checked at their entry. This
// spares the small leaf functions of C and Rust (5–10% on the Nexmark C
// guests); every function of a Go guest calls.
func instrumentCode(b []byte, p int, ix indexes, m *Module) ([]byte, error) {
	check := appendCheck(nil, ix)
	r := &reader{b: b, p: p}
	var n uint32
	if b != nil {
		n = r.u32()
		if r.err != nil {
			return nil, r.err
		}
	}
	if n > maxFunctions {
		return nil, &Error{Offset: p, Msg: fmt.Sprintf("%d functions, more than %d", n, maxFunctions), Err: ErrUnsupported, limit: true}
	}
	dst := make([]byte, 0, len(b)-p+len(b)/8+64)
	dst = appendU32(dst, n+2)
	firstFunc := ix.funcs - n // the first defined function's index, for messages

	// The call inserted before each bulk memory instruction.
	charge := append([]byte{0x10}, appendU32(nil, ix.charge)...)
	var loops, bulks []int
	for i := uint32(0); i < n; i++ {
		at := r.p
		size := r.u32()
		if r.err != nil {
			return nil, r.err
		}
		if uint64(size) > uint64(len(b)-r.p) {
			return nil, &Error{Offset: at, Msg: fmt.Sprintf("function %d: body of %d bytes runs past the code section", firstFunc+i, size)}
		}
		if size > maxBodyLength {
			return nil, &Error{Offset: at, Msg: fmt.Sprintf("function %d: body of %d bytes, more than %d", firstFunc+i, size, maxBodyLength), Err: ErrUnsupported, limit: true}
		}
		end := r.p + int(size)
		body := &reader{b: b[:end], p: r.p}
		skipLocals(body)
		entry := body.p
		var (
			calls bool
			err   error
		)
		if loops, bulks, calls, err = walk(body, ix, loops[:0], bulks[:0]); err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Msg = fmt.Sprintf("function %d: %s", firstFunc+i, e.Msg)
			}
			return nil, err
		}
		checks := uint64(len(loops))
		if calls {
			checks++
		}
		newSize := uint64(size) + uint64(len(check))*checks + uint64(len(charge)*len(bulks))
		if newSize > 1<<32-1 {
			return nil, &Error{Offset: at, Msg: fmt.Sprintf("function %d: too large", firstFunc+i)}
		}
		dst = appendU32(dst, uint32(newSize))
		dst = append(dst, b[r.p:entry]...)
		if calls {
			dst = append(dst, check...)
			m.Functions++
		}
		// Insert in offset order: loop checks after a loop's block type,
		// charges before a bulk instruction (a loop whose first
		// instruction is one gets the check first).
		last, li, bi := entry, 0, 0
		for li < len(loops) || bi < len(bulks) {
			at, ins := 0, check
			if bi == len(bulks) || (li < len(loops) && loops[li] <= bulks[bi]) {
				at = loops[li]
				li++
			} else {
				at, ins = bulks[bi], charge
				bi++
			}
			dst = append(dst, b[last:at]...)
			dst = append(dst, ins...)
			last = at
		}
		dst = append(dst, b[last:end]...)
		r.p = end
		m.Loops += len(loops)
		m.Bulk += len(bulks)
	}
	if r.p != len(b) {
		return nil, &Error{Offset: r.p, Msg: "code section longer than its function bodies"}
	}
	refuel := appendRefuel(nil, ix)
	dst = appendU32(dst, uint32(len(refuel)))
	dst = append(dst, refuel...)
	chargeBody := appendCharge(nil, ix)
	dst = appendU32(dst, uint32(len(chargeBody)))
	return append(dst, chargeBody...), nil
}

// maxLocals is the most locals a function may declare, as in web browsers
// (the JS API's implementation limits). A compiler that allocates for the
// declared count (wazero does) would otherwise take gigabytes for a few
// bytes of module.
const maxLocals = 50000

// Bounds on a function's shape, checked as the rewrite reads it. wazero's
// compiler takes time quadratic in block nesting (16,000 nested blocks in one
// 48 KB function: 2.6 s; 64,000: 44 s) and grows with br_table sizes, so a
// small module could hold a node's compile for minutes. Real code stays far
// below: the Go guests nest 550 deep with br_tables of 895 labels. The
// br_table bound is web browsers' (V8's kV8MaxWasmFunctionBrTableSize).
const (
	maxNesting    = 10_000
	maxBrTable    = 65_520
	maxFunctions  = 1_000_000 // defined functions, as in web browsers
	maxBodyLength = 7_654_321 // bytes of one function body, as in web browsers
)

// skipLocals reads a function's local declarations.
func skipLocals(r *reader) {
	at := r.p
	n := r.vecLen()
	var sum uint64
	for i := uint32(0); i < n && r.err == nil; i++ {
		sum += uint64(r.u32())
		r.valType()
	}
	if sum > maxLocals {
		r.unsupported(at, fmt.Sprintf("%d locals, more than %d", sum, maxLocals))
	}
}

// Immediates of the one-byte opcodes.
const (
	opUnknown  = iota
	opNone     // no immediate
	opBlock    // block type; opens a block (block, if, try)
	opLoop     // block type; opens a loop
	opEnd      // closes a block
	opDelegate // label; closes a try
	opIdx      // one index (u32)
	opGlobal   // a global's index
	opFunc     // a function's index
	opIdx2     // two indexes
	opBrTable  // vec of labels, then a label
	opMemArg   // alignment (and memory index), offset
	opI32      // s32
	opI64      // s64
	opF32      // 4 bytes
	opF64      // 8 bytes
	opSelectT  // vec of value types
	opHeapType // ref.null
	opTryTable // block type, vec of catch clauses; opens a block
	opPrefixFC // bulk memory, saturating truncation, tables
	opPrefixFD // SIMD
	opPrefixFE // threads
)

var opcodes = func() (t [256]uint8) {
	set := func(kind uint8, ops ...byte) {
		for _, op := range ops {
			t[op] = kind
		}
	}
	span := func(kind uint8, lo, hi byte) {
		for op := int(lo); op <= int(hi); op++ {
			t[op] = kind
		}
	}
	set(opNone, 0x00, 0x01, 0x05, 0x0a, 0x0f, 0x19, 0x1a, 0x1b, 0xd1, 0xd4)
	set(opBlock, 0x02, 0x04, 0x06) // block, if, try (legacy exceptions)
	set(opLoop, 0x03)
	set(opEnd, 0x0b)
	set(opDelegate, 0x18)
	// catch (legacy), throw, rethrow, br, br_if, call_ref, return_call_ref,
	// local get/set/tee, table.get/set, memory.size/grow (memory index),
	// br_on_null, br_on_non_null.
	set(opIdx, 0x07, 0x08, 0x09, 0x0c, 0x0d, 0x14, 0x15, 0x20, 0x21, 0x22, 0x25, 0x26, 0x3f, 0x40, 0xd5, 0xd6)
	set(opGlobal, 0x23, 0x24)     // global.get, global.set
	set(opFunc, 0x10, 0x12, 0xd2) // call, return_call, ref.func
	set(opIdx2, 0x11, 0x13)       // call_indirect, return_call_indirect: type, table
	set(opBrTable, 0x0e)
	span(opMemArg, 0x28, 0x3e)
	set(opI32, 0x41)
	set(opI64, 0x42)
	set(opF32, 0x43)
	set(opF64, 0x44)
	span(opNone, 0x45, 0xc4) // numeric instructions
	set(opSelectT, 0x1c)
	set(opHeapType, 0xd0)
	set(opTryTable, 0x1f)
	set(opPrefixFC, 0xfc)
	set(opPrefixFD, 0xfd)
	set(opPrefixFE, 0xfe)
	return t
}()

// Immediates of the SIMD (0xfd) opcodes, which all lie below 0x100 (relaxed
// SIMD, 0x100 and up, is not supported).
const (
	vecUnknown    = iota
	vecNone       // no immediate
	vecMemArg     // loads and stores
	vecMemArgLane // load/store lane: memarg, lane index
	vecBytes16    // v128.const, i8x16.shuffle
	vecLane       // extract/replace lane
)

var vecOpcodes = func() (t [256]uint8) {
	for op := range t {
		t[op] = vecNone
	}
	for op := 0x00; op <= 0x0b; op++ {
		t[op] = vecMemArg
	}
	t[0x5c], t[0x5d] = vecMemArg, vecMemArg // v128.load32_zero, load64_zero
	for op := 0x54; op <= 0x5b; op++ {
		t[op] = vecMemArgLane
	}
	t[0x0c], t[0x0d] = vecBytes16, vecBytes16
	for op := 0x15; op <= 0x22; op++ {
		t[op] = vecLane
	}
	// Gaps in the SIMD opcode space.
	for _, op := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		t[op] = vecUnknown
	}
	return t
}()

// walk reads a function's expression from r.p to the end of r.b. It returns
// loops with the offset just after each loop's block type appended, and
// whether the function calls (any of call, call_indirect, return_call,
// return_call_indirect, call_ref, return_call_ref).
func walk(r *reader, ix indexes, loops, bulks []int) (_, _ []int, calls bool, _ error) {
	depth := 1 // the function's own block
	for r.err == nil {
		if depth > maxNesting {
			r.overLimit(r.p, fmt.Sprintf("blocks nested deeper than %d", maxNesting))
			break
		}
		at := r.p
		if at >= len(r.b) {
			r.fail(at, "body ends before its final end")
			break
		}
		op := r.b[at]
		r.p++
		if op >= 0x10 && op <= 0x15 {
			calls = true
		}
		switch opcodes[op] {
		case opNone:
		case opBlock:
			r.blockType()
			depth++
		case opLoop:
			r.blockType()
			depth++
			if r.err == nil {
				loops = append(loops, r.p)
			}
		case opTryTable:
			r.blockType()
			n := r.vecLen()
			for i := uint32(0); i < n && r.err == nil; i++ {
				switch kind := r.byte(); kind {
				case 0x00, 0x01: // catch, catch_ref: tag, label
					r.u32()
					r.u32()
				case 0x02, 0x03: // catch_all, catch_all_ref: label
					r.u32()
				default:
					r.unsupported(r.p-1, fmt.Sprintf("try_table catch kind %#x", kind))
				}
			}
			depth++
		case opEnd, opDelegate:
			if opcodes[op] == opDelegate {
				r.u32()
			}
			depth--
			if depth == 0 {
				if r.err == nil && r.p != len(r.b) {
					r.fail(r.p, fmt.Sprintf("%d bytes after the body's final end", len(r.b)-r.p))
				}
				return loops, bulks, calls, r.err
			}
		case opIdx:
			r.u32()
		case opGlobal:
			// The module's own code must not reach the flag or the fuel
			// (which an invalid index would, once they exist).
			if idx := r.u32(); r.err == nil && idx >= ix.globals {
				r.fail(at, fmt.Sprintf("global %d out of range (the module has %d)", idx, ix.globals))
			}
		case opFunc:
			if idx := r.u32(); r.err == nil && idx >= ix.funcs {
				r.fail(at, fmt.Sprintf("function %d out of range (the module has %d)", idx, ix.funcs))
			}
		case opIdx2:
			r.u32()
			r.u32()
		case opBrTable:
			n := r.vecLen()
			if n > maxBrTable {
				r.overLimit(at, fmt.Sprintf("br_table of %d labels, more than %d", n, maxBrTable))
			}
			for i := uint32(0); i < n && r.err == nil; i++ {
				r.u32()
			}
			r.u32()
		case opMemArg:
			r.memArg()
		case opI32:
			r.leb(5)
		case opI64:
			r.leb(10)
		case opF32:
			r.skip(4)
		case opF64:
			r.skip(8)
		case opSelectT:
			n := r.vecLen()
			for i := uint32(0); i < n && r.err == nil; i++ {
				r.valType()
			}
		case opHeapType:
			r.heapType()
		case opPrefixFC:
			if bulk := misc(r, at); bulk && r.err == nil {
				bulks = append(bulks, at)
			}
		case opPrefixFD:
			vec(r, at)
		case opPrefixFE:
			atomic(r, at)
		default:
			r.unknown(at, fmt.Sprintf("%#02x", op))
		}
	}
	return loops, bulks, calls, r.err
}

// misc reads the rest of a 0xfc instruction and says whether it is a bulk
// memory instruction whose byte count is on top of the stack (memory.init,
// memory.copy, memory.fill).
func misc(r *reader, at int) (bulk bool) {
	sub := r.u32()
	switch {
	case r.err != nil:
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init data, memory
		r.u32()
		r.u32()
	case sub == 9, sub == 11, sub == 13, sub == 15, sub == 16, sub == 17:
		// data.drop data, memory.fill memory, elem.drop elem,
		// table.grow/size/fill table
		r.u32()
	case sub == 10, sub == 12, sub == 14:
		// memory.copy memories, table.init elem table, table.copy tables
		r.u32()
		r.u32()
	default:
		r.unknown(at, fmt.Sprintf("0xfc %d", sub))
	}
	return sub == 8 || sub == 10 || sub == 11
}

// vec reads the rest of a 0xfd (SIMD) instruction.
func vec(r *reader, at int) {
	sub := r.u32()
	if r.err != nil {
		return
	}
	kind := uint8(vecUnknown)
	if sub < 0x100 {
		kind = vecOpcodes[sub]
	}
	switch kind {
	case vecNone:
	case vecMemArg:
		r.memArg()
	case vecMemArgLane:
		r.memArg()
		r.byte()
	case vecBytes16:
		r.skip(16)
	case vecLane:
		r.byte()
	default:
		r.unknown(at, fmt.Sprintf("0xfd %d", sub))
	}
}

// atomic reads the rest of a 0xfe (threads) instruction.
func atomic(r *reader, at int) {
	switch sub := r.u32(); {
	case r.err != nil:
	case sub <= 0x02 || (sub >= 0x10 && sub <= 0x4e): // notify, wait, loads, stores, read-modify-writes
		r.memArg()
	case sub == 0x03: // atomic.fence: a zero byte
		r.byte()
	default:
		r.unknown(at, fmt.Sprintf("0xfe %d", sub))
	}
}
