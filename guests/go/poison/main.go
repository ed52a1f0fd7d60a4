// Command poison is an Eddy process function for dead-letter tests. It
// upper-cases every value (as bytes.ToUpper) except three:
//
//   - "poison" is rejected: code REJECTED, reason "poison record";
//   - "panic" panics; the SDK reports code PANIC, reason "panic record";
//   - "code77" fails with the user code 77, reason "code 77 record".
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/poison.wasm ./poison
package main

import (
	"bytes"
	"errors"

	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("poison", "1.0.0")
	eddy.Map(poison)
}

func main() {}

var (
	errPoison = errors.New("poison record")
	errCode77 = eddy.ErrorCode(77, errors.New("code 77 record"))
)

func poison(r eddy.Record) (eddy.Record, error) {
	switch string(r.Value) {
	case "poison":
		return r, errPoison
	case "panic":
		panic("panic record")
	case "code77":
		return r, errCode77
	}
	if r.Value != nil {
		r.Value = bytes.ToUpper(r.Value)
	}
	return r, nil
}
