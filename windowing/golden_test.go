package windowing

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/windowing")

// TestGolden runs the scripts in ../testdata/windowing. Each file holds
// commands, a line "----", and the expected trace; `go test ./windowing
// -run Golden -rewrite` regenerates the traces.
//
// Commands (one a line, # starts a comment):
//
//	config k=v ...        window=tumbling|hopping|sliding|session|global
//	                      size= advance= gap= count= grace= disorder= idle=
//	                      retention= emit=final|update zone=IANA time=json:path
//	assign P...           declare partitions
//	rec P KEY TIME VALUE  TIME: ms, RFC 3339, or - (0); VALUE: rest of line
//	clock DURATION        advance the fake processing-time clock
//	advance               Windower.Advance
//	flush                 Windower.Flush
//	restart               a new Windower restored from the store (keys in
//	                      order) at the watermark, with the same partitions
//	store                 list the store's accumulators
//
// The trace lists, per command that produced something, its line and the
// emits and late records; then the final watermark, stats (of the Windower
// since the last restart) and store size.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/windowing/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			script, want, ok := strings.Cut(string(src), "\n----\n")
			if !ok {
				t.Fatalf("%s: no ---- separator", f)
			}
			got, err := runScript(script)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(script+"\n----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s: trace differs (rerun with -rewrite to accept)\n--- got\n%s--- want\n%s", f, got, want)
			}
		})
	}
}

// TestGoldenRestarts checks that the restarts of the golden scripts change
// nothing: each script with a restart gives the same emits, late records,
// store listings, watermark and store size without its restarts.
func TestGoldenRestarts(t *testing.T) {
	files, _ := filepath.Glob("../testdata/windowing/*.txt")
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		script, _, _ := strings.Cut(string(src), "\n----\n")
		lines := strings.Split(script, "\n")
		restarts := 0
		for i, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "restart" {
				lines[i] = "# " + l // keeps the line numbers
				restarts++
			}
		}
		if restarts == 0 {
			continue
		}
		n++
		with, err := runScript(script)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		without, err := runScript(strings.Join(lines, "\n"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got, want := withoutRestarts(with), withoutRestarts(without); got != want {
			t.Errorf("%s: the restarts change the trace\n--- with restarts\n%s--- without\n%s", f, got, want)
		}
	}
	if n < 3 {
		t.Fatalf("%d golden scripts with restarts, want at least 3", n)
	}
}

// withoutRestarts drops the restart entries and the stats (which start over
// at a restart) from a trace.
func withoutRestarts(trace string) string {
	var b strings.Builder
	skip := false
	for _, l := range strings.SplitAfter(trace, "\n") {
		if !strings.HasPrefix(l, " ") {
			skip = strings.HasSuffix(l, ": restart\n") || strings.HasPrefix(l, "stats ")
		}
		if !skip {
			b.WriteString(l)
		}
	}
	return b.String()
}

func runScript(script string) (string, error) {
	var (
		b      strings.Builder
		w      *Windower
		store  = newSumStore()
		now    = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		cfg    = Config{Clock: func() time.Time { return now }}
		loc    *time.Location
		out    Output
		parts  []int32
		counts = map[string]int{} // global count windows' counts, as a caller saves them
	)
	sc := bufio.NewScanner(strings.NewReader(script))
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if f[0] != "config" && w == nil {
			return "", fmt.Errorf("line %d: %s before config", line, f[0])
		}
		out.Reset()
		var err error
		switch f[0] {
		case "config":
			loc, err = parseConfig(&cfg, f[1:])
			if err == nil {
				w, err = New(cfg, store)
			}
		case "assign":
			for _, s := range f[1:] {
				p, perr := strconv.Atoi(s)
				if perr != nil {
					return "", fmt.Errorf("line %d: %w", line, perr)
				}
				w.Assign(int32(p))
				parts = append(parts, int32(p))
			}
		case "rec":
			if len(f) < 5 {
				return "", fmt.Errorf("line %d: rec P KEY TIME VALUE", line)
			}
			p, perr := strconv.Atoi(f[1])
			if perr != nil {
				return "", fmt.Errorf("line %d: %w", line, perr)
			}
			ts, terr := parseTime(f[3])
			if terr != nil {
				return "", fmt.Errorf("line %d: %w", line, terr)
			}
			// The value is the rest of the line after the time field.
			rest := strings.TrimSpace(text[strings.Index(text, f[3])+len(f[3]):])
			rec := &abi.Record{Key: []byte(f[2]), Value: []byte(rest), Timestamp: ts}
			err = w.Process(int32(p), rec, &out)
		case "clock":
			d, derr := time.ParseDuration(f[1])
			if derr != nil {
				return "", fmt.Errorf("line %d: %w", line, derr)
			}
			now = now.Add(d)
		case "advance":
			err = w.Advance(&out)
		case "flush":
			err = w.Flush(&out)
		case "restart":
			wm := w.Watermark()
			// Global count windows' counts are saved beside the store.
			if err = w.TakeCounts(func(key []byte, n int) error {
				if n == 0 {
					delete(counts, string(key))
				} else {
					counts[string(key)] = n
				}
				return nil
			}); err != nil {
				break
			}
			if w, err = New(cfg, store); err != nil {
				break
			}
			w.Assign(parts...)
			keys := store.sortedKeys()
			for _, k := range keys {
				if err = w.Restore(wm, []byte(k.key), k.w); err != nil {
					break
				}
			}
			for k, n := range counts {
				w.RestoreCount([]byte(k), n)
			}
			if err == nil {
				fmt.Fprintf(&b, "%d: restart\n  %d accumulators at watermark %s\n", line, len(keys), fmtWM(wm))
			}
		case "store":
			fmt.Fprintf(&b, "%d: store\n", line)
			for _, k := range store.sortedKeys() {
				a := store.m[k]
				fmt.Fprintf(&b, "  %s %s count=%d sum=%d\n", k.key, fmtWindow(k.w, loc), a.count, a.sum)
			}
		default:
			return "", fmt.Errorf("line %d: unknown command %q", line, f[0])
		}
		if err != nil {
			fmt.Fprintf(&b, "%d: %s: error: %v\n", line, f[0], err)
			continue
		}
		if len(out.Emits)+len(out.Late) > 0 {
			fmt.Fprintf(&b, "%d: %s\n", line, strings.Join(f, " "))
		}
		for _, e := range out.Emits {
			switch {
			case e.Removed:
				fmt.Fprintf(&b, "  removed %s %s\n", e.Key, fmtWindow(e.Window, loc))
			case e.Final:
				fmt.Fprintf(&b, "  final %s %s %s\n", e.Key, fmtWindow(e.Window, loc), e.Value)
			default:
				fmt.Fprintf(&b, "  update %s %s %s\n", e.Key, fmtWindow(e.Window, loc), e.Value)
			}
		}
		for _, l := range out.Late {
			fmt.Fprintf(&b, "  late p%d %s t=%d %s wm=%s\n", l.Partition, l.Record.Key, l.Time, fmtWindow(l.Window, loc), fmtWM(l.Watermark))
		}
	}
	if w != nil {
		s := w.Stats()
		fmt.Fprintf(&b, "watermark %s\n", fmtWM(w.Watermark()))
		fmt.Fprintf(&b, "stats records=%d late=%d fired=%d updates=%d expired=%d open=%d\n",
			s.Records, s.Late, s.Fired, s.Updates, s.Expired, s.Open)
	}
	fmt.Fprintf(&b, "store %d\n", len(store.m))
	return b.String(), sc.Err()
}

func parseConfig(cfg *Config, args []string) (*time.Location, error) {
	var loc *time.Location
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("config %q: want key=value", a)
		}
		var d time.Duration
		var err error
		switch k {
		case "size", "advance", "gap", "grace", "disorder", "idle", "retention":
			if d, err = time.ParseDuration(v); err != nil {
				return nil, err
			}
		}
		switch k {
		case "window":
			cfg.Window.Kind, err = ParseKind(v)
		case "size":
			cfg.Window.Size = d
			if cfg.Window.Advance == 0 || cfg.Window.Kind == KindTumbling {
				cfg.Window.Advance = d
			}
		case "advance":
			cfg.Window.Advance = d
		case "gap":
			cfg.Window.Gap = d
		case "count":
			cfg.Window.Count, err = strconv.Atoi(v)
		case "grace":
			cfg.Grace = d
		case "disorder":
			cfg.Disorder = d
		case "idle":
			cfg.IdleTimeout = d
		case "retention":
			cfg.Retention = d
		case "emit":
			switch v {
			case "final":
				cfg.Emit = EmitFinal
			case "update":
				cfg.Emit = EmitUpdate
			default:
				err = fmt.Errorf("emit %q", v)
			}
		case "zone":
			if loc, err = time.LoadLocation(v); err == nil {
				cfg.Window.Location = loc
			}
		case "time":
			path, ok := strings.CutPrefix(v, "json:")
			if !ok {
				return nil, fmt.Errorf("time %q: want json:PATH", v)
			}
			cfg.Time, err = NewJSONField(path)
		default:
			err = fmt.Errorf("unknown config key %q", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return loc, nil
}

func parseTime(s string) (int64, error) {
	if s == "-" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

func fmtWM(wm int64) string {
	switch wm {
	case NoWatermark:
		return "none"
	case 1<<63 - 1:
		return "end"
	}
	return strconv.FormatInt(wm, 10)
}

func fmtWindow(w Window, loc *time.Location) string {
	if loc == nil || w == GlobalWindow {
		return w.String()
	}
	s, e := time.UnixMilli(w.Start).In(loc), time.UnixMilli(w.End).In(loc)
	return fmt.Sprintf("%s[%s,%s %v)", w, s.Format(time.RFC3339), e.Format(time.RFC3339), e.Sub(s))
}
