// Package eddy provides the Go guest SDK for Eddy: it turns ordinary Go
// functions into an Eddy function, a WebAssembly module that speaks the guest
// ABI (abi/ABI.md in the Eddy repository), built with the standard Go
// toolchain.
//
// # Usage
//
// A guest is a main package that registers its handlers in init; the Wasm
// module runs init when the host calls _initialize, and main is never called.
//
//	package main
//
//	import (
//		"bytes"
//
//		eddy "github.com/eddy-streams/eddy/sdk/go"
//	)
//
//	func init() {
//		eddy.SetName("upper", "1.0.0")
//		eddy.Map(func(r eddy.Record) (eddy.Record, error) {
//			r.Value = bytes.ToUpper(r.Value)
//			return r, nil
//		})
//	}
//
//	func main() {}
//
// Build it as a reactor module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o upper.wasm .
//
// and try it with `eddy test upper.wasm --input records.jsonl`.
//
// # Kinds
//
// A module implements one handler of each kind it wants: one process handler
// (Map, Filter or FlatMap), an Aggregate, a Join, a KeyBy and a Timestamp
// extractor. Registering a kind twice panics: it is a programming error. The
// manifest lists the registered kinds; the module exports every kind, and
// the unregistered ones answer UNSUPPORTED.
//
// # Errors
//
// A handler fails one record, never the batch:
//
//   - a returned error rejects the record (code REJECTED) with err.Error()
//     as the reason; the host sends the record to the dead-letter topic;
//   - BadInput(err) says the payload could not be decoded (BAD_INPUT);
//   - ErrorCode(code, err) carries a function-defined code, 64 to 255;
//   - a panic is recovered and fails only its record (PANIC), with the panic
//     message as the reason.
//
// # Memory and speed
//
// Records are handed to handlers as views into the host's input buffer,
// valid during the call (see Record); Clone what you keep. The SDK decodes
// and encodes without allocating per record and reuses one output buffer, so
// a handler that does not allocate makes the whole path allocation-free.
//
// # Host functions
//
// Log and Logf write to the host's log, Count adds to a metric, and StateGet,
// StatePut and StateDelete read and write keyed state. In native builds (plain
// go test) they use in-memory stand-ins, which package eddytest inspects; the
// same package runs a guest's handlers through the ABI envelopes without Wasm.
//
// # Concurrency
//
// A Wasm instance is single-threaded and the host never calls one instance
// from two threads. Handlers need no locking, but must not start goroutines
// that outlive the call, and the SDK's functions must not be called from other
// goroutines.
package eddy
