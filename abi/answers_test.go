package abi_test

import (
	"errors"
	"testing"

	"github.com/eddy-streams/eddy/abi"
)

// TestOutputHeaderNamesStrOrBin: ABI.md 5.2 says header names are decoded
// like bytes; an answer writing one as bin is as valid as one writing str.
func TestOutputHeaderNamesStrOrBin(t *testing.T) {
	in := []abi.Record{{Timestamp: 7}}
	for name, name8 := range map[string][]byte{"str": {0xa1, 'h'}, "bin": {0xc4, 0x01, 'h'}} {
		// [[0, [[nil, nil, nil, [[name, "v"]]]]]]
		b := append([]byte{0x91, 0x92, 0x00, 0x91, 0x94, 0xc0, 0xc0, 0xc0, 0x91, 0x92}, name8...)
		b = append(b, 0xc4, 0x01, 'v')
		var out abi.ProcessOutput
		if err := abi.DecodeProcessOutput(b, in, &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h := out.Records[0].Headers; len(h) != 1 || h[0].Key != "h" || string(h[0].Value) != "v" || out.Records[0].Timestamp != 7 {
			t.Fatalf("%s: %+v", name, out.Records[0])
		}
	}
}

// TestOutputTimestampAboveInt64IsMalformed: an output timestamp written as
// a uint64 above the int64 maximum is not a timestamp (ABI.md 5.2): the
// answer is malformed output, never a wrapped negative time.
func TestOutputTimestampAboveInt64IsMalformed(t *testing.T) {
	in := []abi.Record{{Timestamp: 7}}
	for name, ts := range map[string][]byte{
		"2^63":       {0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0},
		"2^64-1":     {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"int64 max":  {0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"int64 min":  {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0},
		"negative 1": {0xff},
	} {
		b := append([]byte{0x91, 0x92, 0x00, 0x91, 0x94, 0xc0, 0xc0}, ts...)
		b = append(b, 0xc0)
		var out abi.ProcessOutput
		err := abi.DecodeProcessOutput(b, in, &out)
		valid := ts[0] != 0xcf || ts[1] < 0x80
		switch {
		case valid && err != nil:
			t.Errorf("%s: %v", name, err)
		case !valid && !errors.Is(err, abi.ErrMalformed):
			t.Errorf("%s: got %v (records %+v), want malformed output", name, err, out.Records)
		}
	}
}
