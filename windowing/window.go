package windowing

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Window is a half-open interval of event time [Start, End), in UTC
// milliseconds since the Unix epoch.
//
// A record with timestamp t belongs to a window when Start <= t < End. The
// global window is [math.MinInt64, math.MaxInt64).
type Window struct {
	Start int64
	End   int64
}

// GlobalWindow is the single window of a [KindGlobal] spec.
var GlobalWindow = Window{Start: math.MinInt64, End: math.MaxInt64}

// String formats w as "[start,end)" in milliseconds.
func (w Window) String() string {
	if w == GlobalWindow {
		return "[global)"
	}
	return "[" + strconv.FormatInt(w.Start, 10) + "," + strconv.FormatInt(w.End, 10) + ")"
}

// Contains reports whether t lies in w.
func (w Window) Contains(t int64) bool { return w.Start <= t && t < w.End }

// Kind is a window type.
type Kind int

// The window types.
const (
	// KindTumbling windows are fixed-size, non-overlapping and aligned to the
	// epoch (or to local midnight, see [Spec.In]): [k*size, (k+1)*size).
	KindTumbling Kind = iota + 1
	// KindHopping windows are fixed-size and start every Advance: a record
	// belongs to size/advance windows. Flink calls these sliding windows.
	KindHopping
	// KindSliding windows follow Kafka Streams' sliding windows in spirit:
	// they are defined by the time difference between records rather than by
	// the epoch. Eddy's definition: for every distinct timestamp t at which a
	// key has an accepted record there is one window [t-Size, t+1), that is
	// all the key's records whose timestamps lie within Size at or before t
	// (both ends inclusive, as Kafka Streams' timeDifference). It is the
	// aggregate "over the last Size, at each record". Unlike Kafka Streams,
	// Eddy does not create the extra "right" windows [t+1, t+1+Size] that
	// exist only to represent a record leaving the window; every window ends
	// at a record.
	KindSliding
	// KindSession windows group a key's records separated by at most Gap
	// (inclusive): a session is [first, last+1) over its records, and a record
	// that falls within Gap of two sessions merges them.
	KindSession
	// KindGlobal is one window per key that never closes; it fires every
	// Count records of the key and then starts over (Flink's countWindow:
	// GlobalWindows with a purging count trigger).
	KindGlobal
)

// String returns the kind's name as written in pipeline files.
func (k Kind) String() string {
	switch k {
	case KindTumbling:
		return "tumbling"
	case KindHopping:
		return "hopping"
	case KindSliding:
		return "sliding"
	case KindSession:
		return "session"
	case KindGlobal:
		return "global"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses a kind name as returned by [Kind.String].
func ParseKind(s string) (Kind, error) {
	for k := KindTumbling; k <= KindGlobal; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("window kind %q: %w", s, ErrInvalidConfig)
}

// Spec describes the windows of a step. Build one with [Tumbling],
// [Hopping], [Sliding], [Session] or [GlobalCount]; a Spec is a value and
// its methods return modified copies.
type Spec struct {
	Kind Kind
	// Size of tumbling, hopping and sliding windows (for sliding: the
	// maximum time difference between two records of a window).
	Size time.Duration
	// Advance of hopping windows (equal to Size for tumbling).
	Advance time.Duration
	// Gap of session windows: the largest time difference between two
	// consecutive records of a session.
	Gap time.Duration
	// Count of global windows: fire every Count records of a key.
	Count int
	// Location aligns tumbling and hopping windows whose Size and Advance are
	// whole days to midnight in that zone, so a "1 day" window is 23 or 25
	// hours long across a DST change. Nil means UTC milliseconds since the
	// epoch (a 1-day window is then always 24 h and starts at 00:00 UTC).
	Location *time.Location
}

// Tumbling returns fixed, non-overlapping windows of the given size.
func Tumbling(size time.Duration) Spec {
	return Spec{Kind: KindTumbling, Size: size, Advance: size}
}

// Hopping returns windows of the given size starting every advance.
func Hopping(size, advance time.Duration) Spec {
	return Spec{Kind: KindHopping, Size: size, Advance: advance}
}

// Sliding returns Kafka Streams-style sliding windows: one window ending at
// each record, covering the preceding timeDifference (see [KindSliding]).
func Sliding(timeDifference time.Duration) Spec {
	return Spec{Kind: KindSliding, Size: timeDifference}
}

// Session returns session windows with the given inactivity gap.
func Session(gap time.Duration) Spec {
	return Spec{Kind: KindSession, Gap: gap}
}

// GlobalCount returns one global window per key that fires every n records.
func GlobalCount(n int) Spec {
	return Spec{Kind: KindGlobal, Count: n}
}

// In returns a copy of s aligned to loc (see [Spec.Location]).
func (s Spec) In(loc *time.Location) Spec {
	s.Location = loc
	return s
}

const day = 24 * time.Hour

// MaxWindowsPerRecord bounds how many hopping windows a record belongs to
// (size/advance, rounded up): the work and memory one record costs, which a
// configuration such as a day every millisecond (86,400,000 windows) would
// make unbounded. A day every 10 s is 8,640.
const MaxWindowsPerRecord = 10_000

// Validate reports whether s is usable. The error wraps [ErrInvalidConfig].
//
// Durations need no upper bound: a time.Duration is at most about 292
// years, and event times are bounded ([MinTime], [MaxTime]), so window
// bounds plus any durations cannot overflow.
func (s Spec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s window: %s: %w", s.Kind, fmt.Sprintf(format, args...), ErrInvalidConfig)
	}
	switch s.Kind {
	case KindTumbling, KindHopping:
		if s.Size < time.Millisecond || s.Size%time.Millisecond != 0 {
			return bad("size %v must be a positive whole number of milliseconds", s.Size)
		}
		if s.Advance < time.Millisecond || s.Advance%time.Millisecond != 0 || s.Advance > s.Size {
			return bad("advance %v must be a positive whole number of milliseconds no larger than size %v", s.Advance, s.Size)
		}
		if s.Kind == KindTumbling && s.Advance != s.Size {
			return bad("advance %v must equal size %v", s.Advance, s.Size)
		}
		if s.Location != nil && (s.Size%day != 0 || s.Advance%day != 0) {
			return bad("a time zone needs size and advance in whole days, got %v and %v", s.Size, s.Advance)
		}
		n := s.Size / s.Advance // rounded up below; size+advance-1 could overflow
		if s.Size%s.Advance != 0 {
			n++
		}
		if n > MaxWindowsPerRecord {
			return bad("size %v every %v puts each record in %d windows, more than %d: make the advance at least size/%d, or use a sliding window",
				s.Size, s.Advance, n, MaxWindowsPerRecord, MaxWindowsPerRecord)
		}
	case KindSliding:
		if s.Size < time.Millisecond || s.Size%time.Millisecond != 0 {
			return bad("time difference %v must be a positive whole number of milliseconds", s.Size)
		}
	case KindSession:
		if s.Gap < time.Millisecond || s.Gap%time.Millisecond != 0 {
			return bad("gap %v must be a positive whole number of milliseconds", s.Gap)
		}
	case KindGlobal:
		if s.Count < 1 {
			return bad("count %d must be at least 1", s.Count)
		}
	default:
		return fmt.Errorf("window kind %d: %w", int(s.Kind), ErrInvalidConfig)
	}
	if s.Location != nil && s.Kind != KindTumbling && s.Kind != KindHopping {
		return bad("a time zone applies only to tumbling and hopping windows")
	}
	return nil
}

// ErrInvalidConfig is wrapped by every configuration error of New and
// Spec.Validate.
var ErrInvalidConfig = errors.New("windowing: invalid config")

// aligner maps event time to the units in which aligned windows are counted:
// milliseconds, or local calendar days of a zone.
type aligner struct {
	loc  *time.Location // nil: milliseconds
	size int64          // in units
	adv  int64          // in units
	pane int64          // gcd(size, adv), in units: the width of a pane
}

func newAligner(s Spec) aligner {
	a := aligner{size: s.Size.Milliseconds(), adv: s.Advance.Milliseconds()}
	if s.Location != nil {
		a = aligner{loc: s.Location, size: int64(s.Size / day), adv: int64(s.Advance / day)}
	}
	a.pane = gcd(a.size, a.adv)
	return a
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// unit returns the unit index of t.
func (a aligner) unit(t int64) int64 {
	if a.loc == nil {
		return t
	}
	y, m, d := time.UnixMilli(t).In(a.loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// millis returns the start of unit u in UTC milliseconds: u itself, or local
// midnight of day u. time.Date normalises days past the month's end and
// resolves a midnight that a DST change skips to the next valid instant.
func (a aligner) millis(u int64) int64 {
	if a.loc == nil {
		return u
	}
	return time.Date(1970, 1, 1+int(u), 0, 0, 0, 0, a.loc).UnixMilli()
}

// assign appends the windows containing t to dst, oldest start first.
func (a aligner) assign(dst []Window, t int64) []Window {
	return a.assignUnit(dst, a.unit(t))
}

// assignUnit appends the windows containing unit u to dst, oldest start
// first. Window bounds are multiples of the pane, so these are also the
// windows that contain u's whole pane.
func (a aligner) assignUnit(dst []Window, u int64) []Window {
	last := floorDiv(u, a.adv) * a.adv
	first := last
	for first-a.adv > u-a.size {
		first -= a.adv
	}
	for s := first; s <= last; s += a.adv {
		dst = append(dst, Window{Start: a.millis(s), End: a.millis(s + a.size)})
	}
	return dst
}

// paneAt returns the pane containing unit u.
func (a aligner) paneAt(u int64) Window {
	p := floorDiv(u, a.pane) * a.pane
	return Window{Start: a.millis(p), End: a.millis(p + a.pane)}
}

// isPane reports whether w is a pane, as paneAt returns them.
func (a aligner) isPane(w Window) bool {
	return a.paneAt(a.unit(w.Start)) == w
}

// next returns the start of the window that follows window w.
func (a aligner) next(w Window) int64 {
	if a.loc == nil {
		return w.Start + a.adv
	}
	return a.millis(a.unit(w.Start) + a.adv)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// A Composite is a window and the state units (see [Store]) its result is
// made of, oldest first.
type Composite struct {
	Window Window
	Units  []Window
}

// Compose tells a reader of a store, such as a query, which windows the
// state units of one key make up once the watermark is wm. For hopping
// windows that is every window containing one of the units (panes) whose
// state has not expired (its end plus Grace plus Retention is after wm),
// with its panes: a pane outlives the windows it served while a later
// window still uses it. For the other kinds each unit is reported as its
// own window (a sliding window's unit is a pane [t, t+1)). units must be
// sorted by start.
func (c Config) Compose(wm int64, units []Window) []Composite {
	s := c.Window
	if s.Kind != KindHopping || s.Advance == s.Size {
		out := make([]Composite, len(units))
		for i, u := range units {
			out[i] = Composite{Window: u, Units: units[i : i+1 : i+1]}
		}
		return out
	}
	a := newAligner(s)
	var out []Composite
	at := map[Window]int{} // window → index in out
	var wins []Window
	for _, u := range units {
		if !validWindow(u) {
			// Not a pane of in-range times (a corrupt entry): shown as
			// it is, rather than composing windows around it.
			out = append(out, Composite{Window: u, Units: []Window{u}})
			continue
		}
		wins = a.assign(wins[:0], u.Start)
		for _, w := range wins {
			if w.End+c.Grace.Milliseconds()+c.Retention.Milliseconds() <= wm {
				continue // expired: some of its panes may be gone
			}
			i, ok := at[w]
			if !ok {
				i = len(out)
				at[w] = i
				out = append(out, Composite{Window: w})
			}
			out[i].Units = append(out[i].Units, u)
		}
	}
	slices.SortFunc(out, func(x, y Composite) int { return cmp.Compare(x.Window.Start, y.Window.Start) })
	return out
}
