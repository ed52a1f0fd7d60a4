package eddy_test

import (
	"bytes"
	"fmt"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// A Map that upper-cases values. In a guest the registration goes in init;
// here eddytest plays the host and sends one batch through the ABI.
func Example() {
	eddy.SetName("upper", "1.0.0")
	eddy.Map(func(r eddy.Record) (eddy.Record, error) {
		if len(r.Value) == 0 {
			return r, eddy.BadInput(nil)
		}
		r.Value = bytes.ToUpper(r.Value)
		return r, nil
	})

	results, err := eddytest.Process(
		eddy.Record{Key: []byte("k1"), Value: []byte("hello"), Timestamp: 1700000000000},
		eddy.Record{Key: []byte("k2"), Value: []byte{}, Timestamp: 1700000000001},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, res := range results {
		if res.Code != eddytest.OK {
			fmt.Printf("failed: code %d, %s\n", res.Code, res.Reason)
			continue
		}
		out := res.Records[0]
		fmt.Printf("%s %s %s\n", out.Key, out.Value, out.Time().Format("2006-01-02T15:04:05.000Z"))
	}
	// Output:
	// k1 HELLO 2023-11-14T22:13:20.000Z
	// failed: code 2, bad input
}
