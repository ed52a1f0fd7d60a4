//go:build wasip1

package eddy

import "unsafe"

// Host functions of ABI.md section 3, imported from module "eddy". Go links
// an import only if it is called, so a guest imports only what it uses.

//go:wasmimport eddy log
func importLog(level int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport eddy error
func importError(code int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport eddy state_get
func importStateGet(kptr unsafe.Pointer, klen uint32, vptr unsafe.Pointer, vcap uint32) int32

//go:wasmimport eddy state_put
func importStatePut(kptr unsafe.Pointer, klen uint32, vptr unsafe.Pointer, vlen uint32) int32

//go:wasmimport eddy state_delete
func importStateDelete(kptr unsafe.Pointer, klen uint32) int32

//go:wasmimport eddy counter_add
func importCounterAdd(nptr unsafe.Pointer, nlen uint32, delta int64)

//go:wasmimport eddy timer_set
func importTimerSet(kptr unsafe.Pointer, klen uint32, domain int32, at int64) int32

//go:wasmimport eddy timer_delete
func importTimerDelete(kptr unsafe.Pointer, klen uint32, domain int32, at int64) int32

//go:wasmimport eddy time_now
func importTimeNow(domain int32) int64

//go:wasmimport eddy config_get
func importConfigGet(nptr unsafe.Pointer, nlen uint32, vptr unsafe.Pointer, vcap uint32) int32

func strPtr(s string) unsafe.Pointer   { return unsafe.Pointer(unsafe.StringData(s)) }
func bytesPtr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func hostLog(level int32, msg string) { importLog(level, strPtr(msg), uint32(len(msg))) }

func reportError(code int32, msg string) { importError(code, strPtr(msg), uint32(len(msg))) }

func hostStateGet(key, buf []byte) int32 {
	return importStateGet(bytesPtr(key), uint32(len(key)), bytesPtr(buf), uint32(len(buf)))
}

func hostStatePut(key, value []byte) int32 {
	return importStatePut(bytesPtr(key), uint32(len(key)), bytesPtr(value), uint32(len(value)))
}

func hostStateDelete(key []byte) int32 {
	return importStateDelete(bytesPtr(key), uint32(len(key)))
}

func hostCounterAdd(name string, delta int64) {
	importCounterAdd(strPtr(name), uint32(len(name)), delta)
}

func hostTimerSet(key []byte, domain int32, at int64) int32 {
	return importTimerSet(bytesPtr(key), uint32(len(key)), domain, at)
}

func hostTimerDelete(key []byte, domain int32, at int64) int32 {
	return importTimerDelete(bytesPtr(key), uint32(len(key)), domain, at)
}

func hostTimeNow(domain int32) int64 { return importTimeNow(domain) }

func hostConfigGet(name string, buf []byte) int32 {
	return importConfigGet(strPtr(name), uint32(len(name)), bytesPtr(buf), uint32(len(buf)))
}
