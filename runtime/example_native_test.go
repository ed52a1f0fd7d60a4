package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// A native function answers through the same Function and Instance methods
// as a guest: its outputs, failed records and codes look the same.
func ExampleEngine_LoadNative() {
	ctx := context.Background()
	e, err := runtime.NewEngine(runtime.WithoutCache())
	if err != nil {
		panic(err)
	}
	defer e.Close(ctx)
	f, err := e.LoadNative("shout", runtime.Native{
		Process: func(r *abi.Record, emit func(abi.Record)) error {
			if len(r.Value) == 0 {
				return runtime.BadInput(errors.New("empty value"))
			}
			out := *r
			out.Value = bytes.ToUpper(r.Value)
			emit(out)
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	defer f.Close(ctx)
	fmt.Println(f.Digest(), f.Manifest().Kinds)

	var out runtime.Output
	in := []abi.Record{{Value: []byte("hi"), Timestamp: 1}, {Timestamp: 2}}
	if err := f.Process(ctx, in, &out); err != nil {
		panic(err)
	}
	fmt.Printf("%s from record %d\n", out.Records[0].Value, out.From[0])
	fmt.Println(out.Failed[0])
	// Output:
	// native:shout [process]
	// HI from record 0
	// function shout (process): record 1: bad_input (code 2): empty value
}
