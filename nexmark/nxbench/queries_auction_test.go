package nxbench

import (
	"testing"
	"time"

	"github.com/eddy-streams/eddy/nexmark"
)

// TestAuctionsCloseBeforeTheEndMarkers checks what q4, q6 and q9 through
// Kafka rely on: every generated auction closes (its timer at expires+1
// fires) once the end markers, at least an hour after the last event, have
// come, while the markers' own auction (expiring a millisecond after them)
// stays open and adds no row. Auction lengths average the time of 100
// auctions, 167 ms at the default rate, and are at most twice that
// (nexmark/generator.go, nextAuctionLengthMs).
func TestAuctionsCloseBeforeTheEndMarkers(t *testing.T) {
	evs, err := Events(200_000)
	if err != nil {
		t.Fatal(err)
	}
	var last, latest int64
	for _, ev := range evs {
		last = max(last, ev.Time)
		if a := ev.Auction; a != nil {
			latest = max(latest, a.Expires+1)
		}
	}
	if latest-last >= time.Hour.Milliseconds() {
		t.Fatalf("an auction closes at %d, %d ms after the last event", latest, latest-last)
	}
	m, err := nexmark.Decode(endMarker(TopicAuctions, 0, 4, last+time.Hour.Milliseconds()).Value)
	if err != nil || m.Auction == nil || m.Auction.Expires <= m.Time {
		t.Fatalf("end marker %+v (%v): it must stay open at its own time", m.Auction, err)
	}
	t.Logf("the last auction closes %d ms after the last event", latest-last)
}
