package windowing

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

func TestComposeHoppingPanes(t *testing.T) {
	c := Config{Window: Hopping(10*time.Second, 4*time.Second), Grace: time.Second, Retention: 3 * time.Second}
	// Panes of 2 s at 0, 2, 8 and 14 s.
	pane := func(s int64) Window { return Window{Start: s * 1000, End: s*1000 + 2000} }
	units := []Window{pane(0), pane(2), pane(8), pane(14)}
	show := func(cs []Composite) string {
		var out []string
		for _, c := range cs {
			var us []int64
			for _, u := range c.Units {
				us = append(us, u.Start/1000)
			}
			out = append(out, fmt.Sprintf("[%d,%d)%v", c.Window.Start/1000, c.Window.End/1000, us))
		}
		return fmt.Sprint(out)
	}
	// Windows start every 4 s and last 10 s: [-8,2) [-4,6) [0,10) [4,14)
	// [8,18) [12,22).
	got := show(c.Compose(math.MinInt64, units))
	want := "[[-8,2)[0] [-4,6)[0 2] [0,10)[0 2 8] [4,14)[8] [8,18)[8 14] [12,22)[14]]"
	if got != want {
		t.Fatalf("all windows:\n got %s\nwant %s", got, want)
	}
	// At 14 s, windows ending by 10 s have expired (end + 1 s grace + 3 s
	// retention <= 14 s): [-8,2), [-4,6) and [0,10) are gone, though panes
	// 0 and 2 are still stored.
	got = show(c.Compose(14000, units))
	want = "[[4,14)[8] [8,18)[8 14] [12,22)[14]]"
	if got != want {
		t.Fatalf("at 14 s:\n got %s\nwant %s", got, want)
	}
	// Tumbling windows (and every other kind) are their own unit.
	tu := []Window{{Start: 0, End: 10000}, {Start: 10000, End: 20000}}
	cs := Config{Window: Tumbling(10 * time.Second)}.Compose(math.MaxInt64, tu)
	if len(cs) != 2 || cs[1].Window != tu[1] || !slices.Equal(cs[1].Units, tu[1:]) {
		t.Fatalf("tumbling: %v", cs)
	}
}

// TestComposeAgreesWithWindower runs a hopping count through a Windower
// with retention and checks that, at each point, composing the store's
// panes gives every window the Windower still keeps, with the count it
// would report.
func TestComposeAgreesWithWindower(t *testing.T) {
	cfg := Config{Window: Hopping(6*time.Second, 4*time.Second), Retention: 5 * time.Second}
	st := newSumStore()
	w, err := New(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	w.Assign(0)
	var out Output
	for i := int64(0); i < 200; i++ {
		r := abi.Record{Key: []byte("k"), Value: []byte("1"), Timestamp: i * 317}
		if err := w.Process(0, &r, &out); err != nil {
			t.Fatal(err)
		}
		if err := w.Advance(&out); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		wm := w.Watermark()
		var units []Window
		for _, k := range st.sortedKeys() {
			units = append(units, k.w)
		}
		for _, c := range cfg.Compose(wm, units) {
			n := int64(0)
			for _, u := range c.Units {
				n += st.m[storeKey{"k", u}].count
			}
			// The reference: records so far inside the window.
			ref := int64(0)
			for j := int64(0); j <= i; j++ {
				if c.Window.Contains(j * 317) {
					ref++
				}
			}
			if n != ref {
				t.Fatalf("after record %d (wm %d): window %v composes %d records from %v, want %d", i, wm, c.Window, n, c.Units, ref)
			}
		}
	}
}
