package conformance

import (
	"strings"
	"testing"
)

// TestFailureTextLabelsBothSides: a failed comparison says which side is
// what the module did and which is what was expected.
func TestFailureTextLabelsBothSides(t *testing.T) {
	err := sameOutcome("batches of 3", "got", outcome{`k=nil v="a" t=0;`}, "want", outcome{`k=nil v="A" t=0;`})
	if err == nil || !strings.Contains(err.Error(), "got: k=nil v=\"a\" t=0;\n  want: k=nil v=\"A\" t=0;") {
		t.Fatalf("got %v", err)
	}
}
