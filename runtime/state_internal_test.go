package runtime

import (
	"bytes"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
)

// TestCallWritesAreBounded: the writes of one call are held by the host
// until it returns, so their bytes are bounded (abi.MaxCallStateBytes),
// rewrites of one key included: past it the put fails the call.
func TestCallWritesAreBounded(t *testing.T) {
	var i Instance
	val := bytes.Repeat([]byte{'v'}, abi.MaxStateValue)
	n := 0
	for ; ; n++ {
		if err := i.checkCallWrites(1 + len(val)); err != nil {
			if !strings.Contains(err.Error(), "over the limit of 67108864 bytes") {
				t.Fatalf("error %q does not name the limit", err)
			}
			break
		}
		i.writes.set([]byte("k"), val, false) // the same key each time
		if n > abi.MaxCallStateBytes/len(val) {
			t.Fatalf("%d writes of %d bytes accepted", n, len(val))
		}
	}
	if n != abi.MaxCallStateBytes/(1+len(val)) {
		t.Fatalf("%d writes accepted, want %d", n, abi.MaxCallStateBytes/(1+len(val)))
	}
	if len(i.writes.arena) > abi.MaxCallStateBytes {
		t.Fatalf("the call holds %d bytes", len(i.writes.arena))
	}
	i.writes.reset()
	if err := i.checkCallWrites(1 + len(val)); err != nil {
		t.Fatalf("after the call: %v", err)
	}
}
