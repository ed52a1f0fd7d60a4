package join

import (
	"bufio"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/windowing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/join")

// TestGolden runs the scripts in ../testdata/join. Each file holds
// commands, a line "----", and the expected trace; `go test ./join -run
// Golden -rewrite` regenerates the traces.
//
// Commands (one a line, # starts a comment; KEY - is a null key):
//
//	config k=v ...          join=stream|table type=inner|left|outer
//	                        before= after= grace= disorder= idle=
//	assign P...             declare inputs
//	left P KEY TIME VALUE   a left record on input P (VALUE: rest of line)
//	right P KEY TIME VALUE  a right record on input P
//	table KEY VALUE|-       a table record (- is a tombstone)
//	lookup KEY TIME VALUE   a stream record joined with the table
//	clock DURATION          advance the fake processing-time clock
//	advance                 WindowJoin.Advance
//	flush                   WindowJoin.Flush
//	restart                 a new WindowJoin over the same buffer, restored
//	                        with the current watermark and assigned inputs
//	buffer                  list the buffered records
//
// The trace lists, per command that produced something, its line and the
// pairs (left and right as TIME:VALUE, - when absent) and late records;
// then the final watermark, stats and buffer (or table) size.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/join/*.txt")
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

// TestGoldenRestart runs each script that restarts again without its
// restart commands: the pairs and late records must be the same (the
// counters start over at a restart).
func TestGoldenRestart(t *testing.T) {
	files, _ := filepath.Glob("../testdata/join/*.txt")
	restarts := regexp.MustCompile(`(?m)^restart.*$`)
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		script, _, _ := strings.Cut(string(src), "\n----\n")
		if !restarts.MatchString(script) {
			continue
		}
		n++
		with, err := runScript(script)
		if err != nil {
			t.Fatal(err)
		}
		without, err := runScript(restarts.ReplaceAllString(script, ""))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := results(with), results(without); !slices.Equal(a, b) {
			t.Errorf("%s: results differ with and without restarts\n--- with\n%s\n--- without\n%s", f, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
	if n == 0 {
		t.Fatal("no script restarts")
	}
}

// results returns the sorted pair and late lines of a trace.
func results(trace string) []string {
	var out []string
	for l := range strings.Lines(trace) {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "pair" || f[0] == "late") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	slices.Sort(out)
	return out
}

type script struct {
	b      strings.Builder
	now    time.Time
	cfg    Config
	table  bool
	buf    *memBuffer
	tab    memTable
	wj     *WindowJoin
	tj     *TableJoin
	inputs []int32
	out    Output
}

func runScript(src string) (string, error) {
	s := &script{now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.cfg.Clock = func() time.Time { return s.now }
	sc := bufio.NewScanner(strings.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if err := s.run(line, text, f); err != nil {
			return "", fmt.Errorf("line %d: %s: %w", line, f[0], err)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	switch {
	case s.wj != nil:
		st := s.wj.Stats()
		fmt.Fprintf(&s.b, "watermark %s\n", fmtWM(s.wj.Watermark()))
		fmt.Fprintf(&s.b, "stats left=%d right=%d pairs=%d unmatched=%d late=%d nullkeys=%d expired=%d buffered=%d\n",
			st.Left, st.Right, st.Pairs, st.Unmatched, st.Late, st.NullKeys, st.Expired, st.Buffered)
		fmt.Fprintf(&s.b, "buffer %d\n", s.buf.n)
	case s.tj != nil:
		st := s.tj.Stats()
		fmt.Fprintf(&s.b, "stats updates=%d deletes=%d lookups=%d pairs=%d unmatched=%d nullkeys=%d\n",
			st.Updates, st.Deletes, st.Lookups, st.Pairs, st.Unmatched, st.NullKeys)
		fmt.Fprintf(&s.b, "table %d\n", len(s.tab))
	}
	return s.b.String(), nil
}

// run executes one command; errors from the join itself are traced, errors
// in the script are returned.
func (s *script) run(line int, text string, f []string) error {
	if f[0] != "config" && s.wj == nil && s.tj == nil {
		return fmt.Errorf("before config")
	}
	s.out.Reset()
	var err error
	switch f[0] {
	case "config":
		if err := s.config(f[1:]); err != nil {
			return err
		}
	case "assign":
		for _, a := range f[1:] {
			p, perr := strconv.ParseInt(a, 10, 32)
			if perr != nil {
				return perr
			}
			s.inputs = append(s.inputs, int32(p))
			s.wj.Assign(int32(p))
		}
	case "left", "right":
		if len(f) < 4 {
			return fmt.Errorf("want %s P KEY TIME VALUE", f[0])
		}
		p, perr := strconv.ParseInt(f[1], 10, 32)
		if perr != nil {
			return perr
		}
		rec, rerr := parseRecord(f[2], f[3], restAfter(text, 4))
		if rerr != nil {
			return rerr
		}
		side := Left
		if f[0] == "right" {
			side = Right
		}
		err = s.wj.Process(side, int32(p), rec, &s.out)
	case "table":
		if len(f) != 3 {
			return fmt.Errorf("want table KEY VALUE|-")
		}
		rec := &abi.Record{Key: nullable(f[1]), Value: nullable(f[2])}
		err = s.tj.Update(rec)
	case "lookup":
		if len(f) < 3 {
			return fmt.Errorf("want lookup KEY TIME VALUE")
		}
		rec, rerr := parseRecord(f[1], f[2], restAfter(text, 3))
		if rerr != nil {
			return rerr
		}
		err = s.tj.Lookup(rec, &s.out)
	case "clock":
		d, derr := time.ParseDuration(f[1])
		if derr != nil {
			return derr
		}
		s.now = s.now.Add(d)
	case "advance":
		err = s.wj.Advance(&s.out)
	case "flush":
		err = s.wj.Flush(&s.out)
	case "restart":
		wm := s.wj.Watermark()
		if s.wj, err = NewWindowJoin(s.cfg, s.buf); err != nil {
			return err
		}
		s.wj.Assign(s.inputs...)
		err = s.wj.Restore(wm)
		if err == nil {
			fmt.Fprintf(&s.b, "%d: restart wm=%s indexed=%d\n", line, fmtWM(wm), s.wj.Stats().Buffered)
		}
	case "buffer":
		fmt.Fprintf(&s.b, "%d: buffer\n", line)
		for side := range s.buf.sides {
			for _, k := range slices.Sorted(maps.Keys(s.buf.sides[side])) {
				for _, e := range *s.buf.sides[side][k] {
					var rec abi.Record
					if err := DecodeRecord(e.rec, &rec); err != nil {
						return err
					}
					m := ""
					if e.matched {
						m = " matched"
					}
					fmt.Fprintf(&s.b, "  %v %s t=%d seq=%d %s%s\n", Side(side), k, e.t, e.seq, rec.Value, m)
				}
			}
		}
	default:
		return fmt.Errorf("unknown command")
	}
	if err != nil {
		fmt.Fprintf(&s.b, "%d: %s: error: %v\n", line, f[0], err)
		return nil
	}
	if len(s.out.Pairs)+len(s.out.Late) > 0 {
		fmt.Fprintf(&s.b, "%d: %s\n", line, strings.Join(f, " "))
	}
	for _, p := range s.out.Pairs {
		right := fmtRec(p.Right)
		if s.table && p.Right != nil {
			right = string(p.Right.Value)
		}
		fmt.Fprintf(&s.b, "  pair %s t=%d left=%s right=%s\n", fmtKey(p.Key), p.Time, fmtRec(p.Left), right)
	}
	for _, l := range s.out.Late {
		fmt.Fprintf(&s.b, "  late %v p%d %s t=%d wm=%s\n", l.Side, l.Input, fmtKey(l.Record.Key), l.Time, fmtWM(l.Watermark))
	}
	return nil
}

func (s *script) config(args []string) error {
	typ := ""
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("config %q: want key=value", a)
		}
		var d time.Duration
		var err error
		switch k {
		case "before", "after", "grace", "disorder", "idle":
			if d, err = time.ParseDuration(v); err != nil {
				return err
			}
		}
		switch k {
		case "join":
			if v != "stream" && v != "table" {
				return fmt.Errorf("join %q: want stream or table", v)
			}
			s.table = v == "table"
		case "type":
			typ = v
			s.cfg.Type, err = ParseType(v)
		case "before":
			s.cfg.Before = d
		case "after":
			s.cfg.After = d
		case "grace":
			s.cfg.Grace = d
		case "disorder":
			s.cfg.Disorder = d
		case "idle":
			s.cfg.IdleTimeout = d
		default:
			err = fmt.Errorf("unknown config key %q", k)
		}
		if err != nil {
			return err
		}
	}
	var err error
	if s.table {
		s.tab = memTable{}
		s.tj, err = NewTableJoin(s.cfg.Type, s.tab)
		if err != nil && typ == "" {
			return fmt.Errorf("want type=")
		}
		return err
	}
	s.buf = newMemBuffer()
	s.wj, err = NewWindowJoin(s.cfg, s.buf)
	return err
}

func nullable(s string) []byte {
	if s == "-" {
		return nil
	}
	return []byte(s)
}

// parseRecord makes a record of KEY, TIME and VALUE.
func parseRecord(key, ts, value string) (*abi.Record, error) {
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, err
	}
	return &abi.Record{Key: nullable(key), Value: []byte(value), Timestamp: t}, nil
}

// restAfter returns text after its first n fields, trimmed.
func restAfter(text string, n int) string {
	for range n {
		text = strings.TrimLeft(text, " \t")
		if i := strings.IndexAny(text, " \t"); i >= 0 {
			text = text[i:]
		} else {
			text = ""
		}
	}
	return strings.TrimSpace(text)
}

func fmtKey(k []byte) string {
	if k == nil {
		return "-"
	}
	return string(k)
}

func fmtRec(r *abi.Record) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%d:%s", r.Timestamp, r.Value)
}

func fmtWM(wm int64) string {
	switch wm {
	case windowing.NoWatermark:
		return "none"
	case 1<<63 - 1:
		return "end"
	}
	return strconv.FormatInt(wm, 10)
}
