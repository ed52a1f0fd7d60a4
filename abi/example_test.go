package abi_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
)

// fromHex parses the hex dumps of ABI.md section 9 (spaces and newlines ignored).
func fromHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWorkedExample checks that the byte-by-byte example of ABI.md is exactly
// what the codec produces and accepts.
func TestWorkedExample(t *testing.T) {
	in := []abi.Record{{Key: []byte("k"), Value: []byte("hi"), Timestamp: 1700000000000,
		Headers: []abi.Header{{Key: "h", Value: []byte("v")}}}}
	wantIn := fromHex(t, `91 94 c4 01 6b c4 02 68 69 cf 00 00 01 8b cf e5 68 00 91 92 a1 68 c4 01 76`)
	if got := abi.AppendRecords(nil, in); !bytes.Equal(got, wantIn) {
		t.Fatalf("input envelope\n got % x\nwant % x", got, wantIn)
	}
	if len(wantIn) != 25 {
		t.Fatalf("ABI.md says the input is 25 bytes, it is %d", len(wantIn))
	}

	answer := fromHex(t, `91 92 00 91 94 c4 01 6b c4 02 48 49 c0 90`)
	if len(answer) != 14 {
		t.Fatalf("answer is %d bytes", len(answer))
	}
	var out abi.ProcessOutput
	if err := abi.DecodeProcessOutput(answer, in, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 1 || string(out.Records[0].Value) != "HI" || out.Records[0].Timestamp != 1700000000000 || out.Records[0].Headers != nil {
		t.Fatalf("decoded %+v", out.Records)
	}

	rejected := append(fromHex(t, `91 92 01 a8`), "bad json"...)
	out.Reset()
	if err := abi.DecodeProcessOutput(rejected, in, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || out.Errors[0].Code != abi.CodeRejected || out.Errors[0].Reason != "bad json" {
		t.Fatalf("decoded errors %+v", out.Errors)
	}

	manifest := fromHex(t, `83 a3 61 62 69 01 a5 6b 69 6e 64 73 91 a7 70 72 6f 63 65 73 73
		a4 6e 61 6d 65 a5 75 70 70 65 72`)
	m := abi.Manifest{ABI: 1, Kinds: []abi.Kind{abi.KindProcess}, Name: "upper"}
	if got := abi.AppendManifest(nil, &m); !bytes.Equal(got, manifest) {
		t.Fatalf("manifest\n got % x\nwant % x", got, manifest)
	}
}

func ExampleAppendRecords() {
	b := abi.AppendRecords(nil, []abi.Record{{Key: []byte("k"), Value: []byte("hi"), Timestamp: 1700000000000}})
	fmt.Printf("% x\n", b)
	// Output: 91 94 c4 01 6b c4 02 68 69 cf 00 00 01 8b cf e5 68 00 90
}
