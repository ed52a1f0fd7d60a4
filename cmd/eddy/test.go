package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/jsonl"
	"github.com/eddy-streams/eddy/msgfield"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
)

type testFlags struct {
	functionFlags
	formatFlags
	input     string
	kind      string
	batchSize int
	base64    bool
	withState bool
}

func newTestCmd(c *cli) *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test FN.wasm",
		Short: "Run a function over JSON-lines records, locally, with no broker",
		Long: `Run a function over records read as JSON lines and print its output records
as JSON lines on stdout. Each input line is one record:

  {"key": "user-1", "value": {"amount": 120}, "timestamp": 1700000000000, "headers": {"h": "v"}}

A string key or value is taken as its UTF-8 bytes, any other JSON value as its
compact JSON text, null as a null; with --base64 strings are base64. Output
values that are JSON are printed as JSON, other text as a string, other bytes
as "value_b64".

The kind defaults to the first the module implements among process, aggregate,
key and timestamp. For aggregate, records are grouped by key and one result per
key is printed, in order of first appearance. For join, each record's value
is an object {"left": ..., "right": ...} (either side may be null or absent)
and the joined value is printed with the record's key.

Records the function fails on are reported on stderr with their line number
and cause, the other records are still printed, and the exit status is 1.

` + formatHelp + ` With --format msgpack the function receives
MessagePack values (for join: each side), and its outputs are shown as JSON.`,
		Example: `  eddy test testdata/go/upper.wasm --input testdata/samples/words.jsonl
  echo '{"key":"a","value":"hello"}' | eddy test testdata/go/upper.wasm
  eddy test testdata/go/stats.wasm --input testdata/samples/amounts.jsonl
  eddy test testdata/go/counter.wasm --state --input testdata/samples/words.jsonl
  eddy test testdata/go/prefix.wasm --config prefix=hello- --input testdata/samples/words.jsonl
  eddy test fn.wasm --pipeline events.yaml --input events.jsonl   # values as the pipeline's (say, msgpack)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.runTest(cmd.Context(), args[0], &f)
		},
	}
	f.functionFlags.register(cmd, runtime.DefaultCallTimeout)
	f.registerConfig(cmd)
	f.formatFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&f.input, "input", "i", "-", "JSON-lines input file, - for stdin")
	fl.StringVar(&f.kind, "kind", "", "kind to run: process, aggregate, join, key or timestamp (default: the module's first)")
	fl.IntVar(&f.batchSize, "batch", 1024, "records per call into the function")
	fl.BoolVar(&f.base64, "base64", false, "keys and values are base64 strings, in and out (with --format msgpack: keys)")
	fl.BoolVar(&f.withState, "state", false, "give the function an in-memory keyed state store")
	return cmd
}

func (c *cli) runTest(ctx context.Context, path string, f *testFlags) error {
	if f.batchSize < 1 || f.batchSize > host.MaxBatchSize {
		return fmt.Errorf("--batch: must be between 1 and %d, got %d", host.MaxBatchSize, f.batchSize)
	}
	format, err := f.resolve("")
	if err != nil {
		return err
	}
	msgpack := format == pipeline.FormatMsgpack
	fn, done, err := c.loadFunction(ctx, path, &f.functionFlags)
	if err != nil {
		return err
	}
	defer done()
	kind, err := pickKind(fn.Manifest(), f.kind)
	if err != nil {
		return err
	}
	in := c.stdin
	if f.input != "-" {
		file, err := os.Open(f.input)
		if err != nil {
			return err
		}
		defer file.Close()
		in = file
	}
	r := jsonl.NewReader(in)
	r.Base64, r.Msgpack = f.base64, msgpack
	w := jsonl.NewWriter(c.stdout)
	w.Base64, w.Msgpack = f.base64, msgpack
	defer w.Flush()

	inst, err := fn.Acquire(ctx)
	if err != nil {
		return err
	}
	defer fn.Release(ctx, inst)
	t := &tester{c: c, inst: inst, w: w, batch: f.batchSize, msgpack: msgpack}
	if f.withState {
		inst.SetState(state.NewMemory())
		if m := fn.Manifest(); m.Has(abi.KindTimer) {
			t.timers = runtime.NewMemoryTimers()
			inst.SetTimers(t.timers)
		}
	}
	// Without --state the state and timer calls answer "unavailable": a
	// failure of a module that makes them is most likely that.
	hint := ""
	if calls := stateCalls(fn.Info().Imports); !f.withState && len(calls) > 0 {
		hint = fmt.Sprintf("the module uses keyed state or timers (it imports %s): run it with --state to give it an in-memory store",
			strings.Join(calls, ", "))
	}
	switch kind {
	case abi.KindProcess:
		err = t.process(ctx, r)
	case abi.KindAggregate:
		err = t.aggregate(ctx, r)
	case abi.KindKey, abi.KindTimestamp:
		err = t.extract(ctx, r, kind)
	case abi.KindJoin:
		err = t.join(ctx, r)
	}
	if err != nil {
		if hint != "" {
			return fmt.Errorf("%w; %s", err, hint)
		}
		return err
	}
	if t.failed > 0 {
		w.Flush()
		if hint != "" {
			hint = "; " + hint
		}
		fmt.Fprintf(c.stderr, "eddy: %d of %d records failed%s\n", t.failed, t.seen, hint)
		return &exitError{code: 1}
	}
	return nil
}

// stateCalls returns the host calls among a module's imports ("module.name")
// that need a keyed state store: the state and timer calls.
func stateCalls(imports []string) []string {
	var calls []string
	for _, imp := range imports {
		if strings.HasPrefix(imp, "eddy.state_") || strings.HasPrefix(imp, "eddy.timer_") {
			calls = append(calls, imp)
		}
	}
	return calls
}

func pickKind(m abi.Manifest, want string) (abi.Kind, error) {
	if want != "" {
		k := abi.Kind(want)
		if !m.Has(k) {
			return "", fmt.Errorf("--kind %s: the module implements %v", want, m.Kinds)
		}
		return k, nil
	}
	for _, k := range []abi.Kind{abi.KindProcess, abi.KindAggregate, abi.KindKey, abi.KindTimestamp, abi.KindJoin} {
		if m.Has(k) {
			return k, nil
		}
	}
	return "", fmt.Errorf("the module implements no kind")
}

// tester feeds records to an instance in batches and prints results.
type tester struct {
	c      *cli
	inst   *runtime.Instance
	w      *jsonl.Writer
	batch  int
	seen   int
	failed int
	// timers is the timer service of a module with timers under --state:
	// its records then go one at a time, the timers due before each firing
	// first (processTimed).
	timers *runtime.MemoryTimers
	lines  []int // input line of each record of the current batch
	// msgpack says the values are MessagePack (--format msgpack): a join
	// input's sides are then read from a MessagePack map.
	msgpack bool
}

// readBatch reads up to t.batch records, remembering their line numbers.
func (t *tester) readBatch(r *jsonl.Reader, recs []abi.Record) ([]abi.Record, error) {
	recs, t.lines = recs[:0], t.lines[:0]
	for len(recs) < t.batch {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
		t.lines = append(t.lines, r.Line())
	}
	t.seen += len(recs)
	return recs, nil
}

// report prints a failed record by its input line. The error's index within
// its batch is dropped: the line says which record it was.
func (t *tester) report(line int, err *runtime.Error) {
	t.failed++
	e := *err
	e.Index, e.Group = -1, -1
	if line > 0 {
		fmt.Fprintf(t.c.stderr, "line %d: %v\n", line, &e)
	} else {
		fmt.Fprintf(t.c.stderr, "%v\n", &e)
	}
}

func (t *tester) process(ctx context.Context, r *jsonl.Reader) error {
	if t.timers != nil {
		return t.processTimed(ctx, r)
	}
	var out runtime.Output
	return t.eachBatch(r, func(recs []abi.Record) error {
		out.Reset()
		if err := t.inst.Process(ctx, recs, &out); err != nil {
			return err
		}
		// Print outputs and failures in input order.
		fi := 0
		for j := range out.Records {
			for fi < len(out.Failed) && out.Failed[fi].Index < int(out.From[j]) {
				t.report(t.lines[out.Failed[fi].Index], out.Failed[fi])
				fi++
			}
			if err := t.w.Write(&out.Records[j]); err != nil {
				return err
			}
		}
		for ; fi < len(out.Failed); fi++ {
			t.report(t.lines[out.Failed[fi].Index], out.Failed[fi])
		}
		return nil
	})
}

// processTimed runs a function with timers record by record, as a node's
// step does: before each record the event-time timers at or before the
// watermark (the largest timestamp of the records before it) fire, and
// the processing-time timers at or before the clock; when the input ends
// every timer fires. Timer outputs are printed where they fire.
func (t *tester) processTimed(ctx context.Context, r *jsonl.Reader) error {
	var out runtime.Output
	wm := int64(math.MinInt64)
	fire := func(end bool) error {
		for {
			now := time.Now().UnixMilli()
			upTo := wm
			if end {
				upTo, now = math.MaxInt64, math.MaxInt64
			}
			t.timers.SetNow(abi.EventTime, wm)
			t.timers.SetNow(abi.ProcessingTime, time.Now().UnixMilli())
			due := append(t.timers.Due(abi.EventTime, upTo), t.timers.Due(abi.ProcessingTime, now)...)
			if len(due) == 0 {
				return nil
			}
			out.Reset()
			if err := t.inst.Timer(ctx, due, &out); err != nil {
				return err
			}
			failed := map[int]bool{}
			for _, e := range out.Failed {
				failed[e.Index] = true
				tm := due[e.Index]
				t.failed++
				e.Index, e.Group = -1, -1
				fmt.Fprintf(t.c.stderr, "timer %q at %d (%s): %v\n", tm.Key, tm.Time, tm.Domain, e)
			}
			for j := range out.Records {
				if failed[int(out.From[j])] {
					continue
				}
				if err := t.w.Write(&out.Records[j]); err != nil {
					return err
				}
			}
			if !end {
				return nil // timers set by these fire before the next record
			}
		}
	}
	saved := t.batch
	t.batch = 1
	defer func() { t.batch = saved }()
	err := t.eachBatch(r, func(recs []abi.Record) error {
		if err := fire(false); err != nil {
			return err
		}
		out.Reset()
		if err := t.inst.Process(ctx, recs, &out); err != nil {
			return err
		}
		for _, e := range out.Failed {
			t.report(t.lines[e.Index], e)
		}
		if len(out.Failed) == 0 {
			for j := range out.Records {
				if err := t.w.Write(&out.Records[j]); err != nil {
					return err
				}
			}
		}
		wm = max(wm, recs[0].Timestamp)
		return nil
	})
	if err != nil {
		return err
	}
	return fire(true)
}

// eachBatch reads batches of records until the input ends and calls fn with
// each.
func (t *tester) eachBatch(r *jsonl.Reader, fn func(recs []abi.Record) error) error {
	var recs []abi.Record
	for {
		var err error
		if recs, err = t.readBatch(r, recs); err != nil {
			return err
		}
		if len(recs) == 0 {
			return nil
		}
		if err := fn(recs); err != nil {
			return err
		}
	}
}

func (t *tester) extract(ctx context.Context, r *jsonl.Reader, kind abi.Kind) error {
	var res []runtime.Result
	return t.eachBatch(r, func(recs []abi.Record) error {
		var err error
		if kind == abi.KindKey {
			res, err = t.inst.Key(ctx, recs, res[:0])
		} else {
			res, err = t.inst.Timestamp(ctx, recs, res[:0])
		}
		if err != nil {
			return err
		}
		for j, x := range res {
			if x.Err != nil {
				t.report(t.lines[j], x.Err)
				continue
			}
			rec := recs[j]
			if kind == abi.KindKey {
				rec.Key = x.Bytes
			} else {
				rec.Timestamp = x.Int
			}
			if err := t.w.Write(&rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// aggregate groups all records by key and prints one result per key.
func (t *tester) aggregate(ctx context.Context, r *jsonl.Reader) error {
	type group struct {
		key   []byte
		acc   []byte // nil until a record of the key has folded
		ts    int64
		lines []int
		recs  []abi.Record
	}
	var order []string
	groups := map[string]*group{}
	var recs []abi.Record
	for {
		var err error
		if recs, err = t.readBatch(r, recs); err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		for j, rec := range recs {
			g, ok := groups[string(rec.Key)]
			if !ok {
				g = &group{key: rec.Key}
				groups[string(rec.Key)] = g
				order = append(order, string(rec.Key))
			}
			g.recs = append(g.recs, rec)
			g.lines = append(g.lines, t.lines[j])
			g.ts = max(g.ts, rec.Timestamp)
		}
		// Fold this batch, one group per key seen in it.
		var in []abi.Group
		var gs []*group
		for _, k := range order {
			if g := groups[k]; len(g.recs) > 0 {
				in = append(in, abi.Group{Key: g.key, Acc: g.acc, Records: g.recs})
				gs = append(gs, g)
			}
		}
		added, failed, err := t.inst.AggAdd(ctx, in, nil, nil)
		if err != nil {
			return err
		}
		refused := make([]int, len(gs))
		for _, e := range failed {
			line := 0
			if e.Index >= 0 {
				line = gs[e.Group].lines[e.Index]
			}
			if e.Group >= 0 {
				refused[e.Group]++
			}
			t.report(line, e)
		}
		for j, a := range added {
			// As the node does (ABI.md 5.4): a group none of whose records
			// folded keeps its accumulator, whatever the guest answered
			// for it.
			if a.Acc != nil && refused[j] < len(gs[j].recs) {
				gs[j].acc = slices.Clone(a.Acc)
			}
			gs[j].recs, gs[j].lines = nil, nil
		}
	}
	// A key none of whose records folded has no accumulator, and no result.
	order = slices.DeleteFunc(order, func(k string) bool { return groups[k].acc == nil })
	if len(order) == 0 {
		return nil
	}
	keys, accs := make([][]byte, len(order)), make([][]byte, len(order))
	for j, k := range order {
		keys[j], accs[j] = groups[k].key, groups[k].acc
	}
	res, err := t.inst.AggResult(ctx, keys, accs, nil)
	if err != nil {
		return err
	}
	for j, x := range res {
		if x.Err != nil {
			t.report(0, x.Err)
			continue
		}
		if x.Bytes == nil {
			continue
		}
		rec := abi.Record{Key: keys[j], Value: x.Bytes, Timestamp: groups[order[j]].ts}
		if err := t.w.Write(&rec); err != nil {
			return err
		}
	}
	return nil
}

func (t *tester) join(ctx context.Context, r *jsonl.Reader) error {
	var res []runtime.Result
	return t.eachBatch(r, func(recs []abi.Record) error {
		keys, left, right := make([][]byte, len(recs)), make([][]byte, len(recs)), make([][]byte, len(recs))
		for j, rec := range recs {
			var err error
			keys[j] = rec.Key
			if left[j], right[j], err = t.sides(rec.Value); err != nil {
				return fmt.Errorf("line %d: join input: value must be {\"left\": ..., \"right\": ...}: %w", t.lines[j], err)
			}
		}
		var err error
		if res, err = t.inst.Join(ctx, keys, left, right, res[:0]); err != nil {
			return err
		}
		for j, x := range res {
			if x.Err != nil {
				t.report(t.lines[j], x.Err)
				continue
			}
			if x.Bytes == nil {
				continue
			}
			rec := abi.Record{Key: keys[j], Value: x.Bytes, Timestamp: recs[j].Timestamp}
			if err := t.w.Write(&rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// sides returns the left and right values of a join input, nil for a side
// that is null or absent: the members of a JSON object, or with --format
// msgpack of a MessagePack map (nil for nil).
func (t *tester) sides(v []byte) (left, right []byte, err error) {
	if !t.msgpack {
		var sides struct{ Left, Right json.RawMessage }
		if err := json.Unmarshal(v, &sides); err != nil {
			return nil, nil, err
		}
		if len(sides.Left) > 0 && string(sides.Left) != "null" {
			left = sides.Left
		}
		if len(sides.Right) > 0 && string(sides.Right) != "null" {
			right = sides.Right
		}
		return left, right, nil
	}
	side := func(name string) ([]byte, error) {
		raw, err := msgfield.Path{name}.Find(v)
		switch {
		case errors.Is(err, msgfield.ErrMissing):
			return nil, nil
		case err != nil:
			return nil, err
		case len(raw) == 1 && raw[0] == msgpcode.Nil:
			return nil, nil
		}
		return raw, nil
	}
	if left, err = side("left"); err != nil {
		return nil, nil, err
	}
	right, err = side("right")
	return left, right, err
}
