package main

import (
	"testing"
	"time"
)

// TestCountFenced: eddy run starts a fenced node again up to maxFenced
// times within fencedWindow, and gives up at the next.
func TestCountFenced(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var fenced []time.Time
	for i := range maxFenced {
		var tooOften bool
		if fenced, tooOften = countFenced(fenced, t0.Add(time.Duration(i)*time.Minute)); tooOften {
			t.Fatalf("fencing %d of %d within the window counted as too often", i+1, maxFenced)
		}
	}
	if _, tooOften := countFenced(fenced, t0.Add(fencedWindow-time.Second)); !tooOften {
		t.Errorf("%d fencings within %s not counted as too often", maxFenced+1, fencedWindow)
	}
	// Later, the first ones have left the window.
	later, tooOften := countFenced(fenced, t0.Add(fencedWindow+90*time.Second))
	if tooOften || len(later) != maxFenced-1 {
		t.Errorf("after the window: %d fencings counted (too often %v), want %d", len(later), tooOften, maxFenced-1)
	}
}
