//go:build wasip1

package eddy

import "unsafe"

// The exports of ABI.md section 2. Every kind is exported; the manifest
// names only the registered ones, and the others answer UNSUPPORTED.
// The Go toolchain exports memory and _initialize (which runs init, where
// guests register) by itself in -buildmode=c-shared.

// inbuf is the eddy_alloc region: one buffer that grows and is reused. The
// package variable keeps it referenced, so the collector never frees memory
// the host writes into. Go's collector does not move objects.
var inbuf []byte

// minAlloc is the smallest eddy_alloc region, so that small batches do not
// grow the buffer in many steps.
const minAlloc = 64 << 10

// maxAlloc is the largest eddy_alloc region; the host caps memory below
// 2 GiB anyway.
const maxAlloc = 1<<31 - 1

//go:wasmexport eddy_abi_v1
func eddyABIv1() {}

// eddyAlloc returns a region of at least size bytes that stays untouched until
// the next eddy_alloc, or 0 if size is impossible.
//
//go:wasmexport eddy_alloc
func eddyAlloc(size uint32) uint32 {
	if uint64(size) > maxAlloc {
		return 0
	}
	if cap(inbuf) < int(size) || inbuf == nil {
		n := max(int(size), 2*cap(inbuf), minAlloc)
		if n > maxAlloc {
			n = int(size)
		}
		inbuf = make([]byte, n)
	}
	inbuf = inbuf[:cap(inbuf)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(inbuf))))
}

//go:wasmexport eddy_manifest
func eddyManifest() int64 { return run(expManifest, 0, 0) }

//go:wasmexport eddy_process
func eddyProcess(ptr, n uint32) int64 { return run(expProcess, ptr, n) }

//go:wasmexport eddy_agg_init
func eddyAggInit(ptr, n uint32) int64 { return run(expAggInit, 0, 0) }

//go:wasmexport eddy_agg_add
func eddyAggAdd(ptr, n uint32) int64 { return run(expAggAdd, ptr, n) }

//go:wasmexport eddy_agg_merge
func eddyAggMerge(ptr, n uint32) int64 { return run(expAggMerge, ptr, n) }

//go:wasmexport eddy_agg_result
func eddyAggResult(ptr, n uint32) int64 { return run(expAggResult, ptr, n) }

//go:wasmexport eddy_join
func eddyJoin(ptr, n uint32) int64 { return run(expJoin, ptr, n) }

//go:wasmexport eddy_key
func eddyKey(ptr, n uint32) int64 { return run(expKey, ptr, n) }

//go:wasmexport eddy_timestamp
func eddyTimestamp(ptr, n uint32) int64 { return run(expTimestamp, ptr, n) }

//go:wasmexport eddy_timer
func eddyTimer(ptr, n uint32) int64 { return run(expTimer, ptr, n) }

// run calls export e on the n bytes at ptr and packs the answer as
// (ptr << 32) | len, or returns -code on a call-level failure.
func run(e export, ptr, n uint32) int64 {
	in, ok := input(ptr, n)
	if !ok {
		reportError(codeBadEnvelope, exportNames[e]+": input is not inside the eddy_alloc region")
		return -int64(codeBadEnvelope)
	}
	out, code := invoke(e, in)
	if code != 0 {
		return -int64(code)
	}
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out))))
	return int64(p)<<32 | int64(uint32(len(out)))
}

// input returns the n bytes at ptr as a slice of inbuf. The host writes
// envelopes only into the eddy_alloc region (ABI.md 6.5), so anything else is
// refused rather than read through an unchecked pointer.
func input(ptr, n uint32) ([]byte, bool) {
	if n == 0 {
		return inbuf[:0:0], true
	}
	base := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(inbuf))))
	if inbuf == nil || ptr < base || uint64(ptr-base)+uint64(n) > uint64(len(inbuf)) {
		return nil, false
	}
	off := int(ptr - base)
	return inbuf[off : off+int(n) : off+int(n)], true
}
