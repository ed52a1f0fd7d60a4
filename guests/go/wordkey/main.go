// Command wordkey implements two Eddy kinds in one module:
//
//   - key: the record's new key is the first white-space-separated word of
//     its value (a null key if the value holds no word);
//   - timestamp: the event time is the top-level integer member "ts" of the
//     value, a JSON object, in milliseconds since the Unix epoch. A value that
//     is not a JSON object, has no "ts", or whose "ts" is not an integer
//     (1.5, 1e3, "17", out of the int64 range) fails with BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/wordkey.wasm ./wordkey
package main

import (
	"errors"
	"strconv"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	"github.com/eddy-streams/eddy/guests/go/internal/words"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("wordkey", "1.0.0")
	eddy.KeyBy(firstWord)
	eddy.Timestamp(eventTime)
}

func main() {}

var (
	errNoTS     = errors.New(`no top-level "ts" member`)
	errTSNotInt = errors.New(`"ts" is not an integer`)
)

// firstWord returns the first word of the value, a view into it (the SDK
// copies it).
func firstWord(r eddy.Record) ([]byte, error) {
	return words.First(r.Value), nil
}

func eventTime(r eddy.Record) (int64, error) {
	v, found, err := jsonscan.Field(r.Value, "ts")
	switch {
	case err != nil:
		return 0, eddy.BadInput(err)
	case !found:
		return 0, eddy.BadInput(errNoTS)
	}
	ts, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, eddy.BadInput(errTSNotInt)
	}
	return ts, nil
}
