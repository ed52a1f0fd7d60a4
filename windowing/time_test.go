package windowing

import (
	"errors"
	"testing"

	"github.com/eddy-streams/eddy/abi"
)

// TestJSONFieldOneDocument checks that a time_field value must be one JSON
// document: trailing bytes (issue 14's `{...}}xyz`) make the record have no
// timestamp, white space does not.
func TestJSONFieldOneDocument(t *testing.T) {
	ex, err := NewJSONField("ts")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{`{"ts":5}`, true},
		{" {\"ts\":5} \n", true},
		{`{"ts":5}}xyz`, false},
		{`{"ts":5} {"ts":6}`, false},
		{`{"ts":5}x`, false},
	} {
		got, err := ex.Timestamp(&abi.Record{Value: []byte(tc.value)})
		switch {
		case tc.ok && (err != nil || got != 5):
			t.Errorf("%q: %d, %v; want 5", tc.value, got, err)
		case !tc.ok && !errors.Is(err, ErrNoTimestamp):
			t.Errorf("%q: %d, %v; want ErrNoTimestamp", tc.value, got, err)
		}
	}
}
