package host

import "testing"

// TestCheckpointMismatch: when a restore may continue from a checkpoint,
// and why not.
func TestCheckpointMismatch(t *testing.T) {
	a, b, none := [16]byte{1}, [16]byte{2}, [16]byte{}
	tests := []struct {
		name     string
		cp       int64
		cpID, id [16]byte
		end      int64
		want     string
	}{
		{name: "no checkpoint", cp: -1, cpID: none, id: a, end: 0, want: ""},
		{name: "same topic, at its end", cp: 10, cpID: a, id: a, end: 10, want: ""},
		{name: "same topic, behind its end", cp: 10, cpID: a, id: a, end: 11, want: ""},
		{name: "other topic", cp: 10, cpID: a, id: b, end: 20, want: rebuildReplaced},
		{name: "other topic, empty", cp: 10, cpID: a, id: b, end: 0, want: rebuildReplaced},
		{name: "same id, shorter log", cp: 10, cpID: a, id: a, end: 9, want: rebuildBehind},
		{name: "checkpoint without id, shorter log", cp: 10, cpID: none, id: a, end: 0, want: rebuildBehind},
		{name: "checkpoint without id, longer log", cp: 10, cpID: none, id: a, end: 12, want: ""},
		{name: "broker without ids", cp: 10, cpID: a, id: none, end: 12, want: ""},
		{name: "end unknown", cp: 10, cpID: a, id: a, end: -1, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkpointMismatch(tc.cp, tc.cpID, tc.end, tc.id); got != tc.want {
				t.Errorf("checkpointMismatch = %q, want %q", got, tc.want)
			}
		})
	}
}
