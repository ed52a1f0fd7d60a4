// Command split is an Eddy process function (a flat map) that splits a
// record's value on white space (Unicode, as strings.Fields) into one record
// per word, with the input's key and timestamp and no headers. An empty or
// blank value, or a null one, gives no records.
//
// The output records are views into the input value held in one slice reused
// for every record: the SDK encodes them before the next call.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o ../../testdata/go/split.wasm ./split
package main

import (
	"github.com/eddy-streams/eddy/guests/go/internal/words"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("split", "1.0.0")
	eddy.FlatMap(split)
}

func main() {}

// out is the output slice, reused for every record.
var out []eddy.Record

func split(r eddy.Record) ([]eddy.Record, error) {
	out = out[:0]
	for w, i := words.Next(r.Value, 0); w != nil; w, i = words.Next(r.Value, i) {
		out = append(out, eddy.Record{Key: r.Key, Value: w, Timestamp: r.Timestamp})
	}
	return out, nil
}
