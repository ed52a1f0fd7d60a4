// Command joiner is an Eddy join function: it combines the left and right
// values of a key, which must be JSON, into {"left":L,"right":R}, with the
// values inserted as they are and null for a missing side. A side that is
// present but not valid JSON (an empty value included) fails the pair with
// BAD_INPUT; when both sides are missing nothing is emitted.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/joiner.wasm ./joiner
package main

import (
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("joiner", "1.0.0")
	eddy.Join(join)
}

func main() {}

var (
	errLeft  = errors.New("left value is not valid JSON")
	errRight = errors.New("right value is not valid JSON")
)

// buf holds the joined value; the SDK copies it before the next call.
var buf []byte

func join(_, left, right []byte) ([]byte, error) {
	if left == nil && right == nil {
		return nil, nil
	}
	if left != nil && !jsonscan.Valid(left) {
		return nil, eddy.BadInput(errLeft)
	}
	if right != nil && !jsonscan.Valid(right) {
		return nil, eddy.BadInput(errRight)
	}
	b := append(buf[:0], `{"left":`...)
	b = appendRaw(b, left)
	b = append(b, `,"right":`...)
	b = appendRaw(b, right)
	buf = append(b, '}')
	return buf, nil
}

func appendRaw(b, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return append(b, v...)
}
