package host

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// initTime decides where the task's records get their event time. Records
// get it (as their timestamp) in the task that runs the steps before an
// aggregate step: the task of the aggregate's own stage, or, when a
// repartition precedes it, the upstream task — whose downstream windows then
// keep a watermark per upstream input. A stage can do both: begin with an
// aggregate after a repartition and feed another through the next one.
func (t *task) initTime() error {
	n := t.n
	st := t.stage
	t.timed = make([]bool, len(n.p.Steps))
	t.extract = make([]windowing.Extractor, len(n.p.Steps))
	afterRepartition := st.From > 0 && (n.p.Steps[st.From].Kind == StepAggregate || n.p.Steps[st.From].Timed())
	if afterRepartition {
		t.byUpstream = true
		for i := range n.upstreamInputs(st) {
			t.inputs = append(t.inputs, i)
		}
	}
	for i := st.From; i < st.To; i++ {
		if n.p.Steps[i].Kind == StepAggregate && !(i == st.From && afterRepartition) {
			t.timed[i] = true
		}
	}
	if n.feedsWindows(st) && n.p.Steps[st.To].Kind == StepAggregate {
		t.timed[st.To] = true
	}
	if len(t.inputs) == 0 {
		t.inputs = []int32{t.part}
	}
	for s, timed := range t.timed {
		if !timed {
			continue
		}
		cfg, err := n.p.Steps[s].Windowing(n.p.Source.ValueFormat())
		if err != nil {
			return err
		}
		t.extract[s] = cfg.Time
	}
	return nil
}

// windowConfig is the configuration of aggregate step s's windower. Its
// records carry their event time as their timestamp already (eventTimes).
func (t *task) windowConfig(s int) (windowing.Config, error) {
	cfg, err := t.n.p.Steps[s].Windowing(t.n.p.Source.ValueFormat())
	cfg.Time = nil
	// The updates an aggregate folds (retract.go) come in any time order:
	// its upstreams' progress alone says what is still to come.
	cfg.ProgressOnly = t.n.folds[s]
	return cfg, err
}

// byInputs makes an aggregator of a stage that reads a repartition topic
// keep a watermark per upstream input.
func (t *task) byInputs(a *aggregator, sk *skipper) error {
	if !t.byUpstream {
		return nil
	}
	a.w.Assign(t.inputs...)
	a.inputOf = func(j int) int32 { return t.from[t.batchSrc[j]] }
	a.progress = t.applyProgress
	a.inputTimes = true
	// Give the inputs their saved times back: expiry and firing already
	// went as far as the saved watermark, so this emits nothing.
	var out windowing.Output
	return restoreInputTimes(a.store.st, t.hasInput, sk.bad, func(in int32, at int64) error { return skipBadTime(a.w.Progress(in, at, &out)) })
}

// skipBadTime drops an error about a saved input time outside the valid
// event-time range (saved before times were checked, or damaged): the
// input then starts over without it, as a new one, rather than the task
// failing at every start.
func skipBadTime(err error) error {
	if errors.Is(err, windowing.ErrTimeRange) {
		return nil
	}
	return err
}

// hasInput reports whether in is one of the windows' inputs. After a
// repartition they are 0 to n-1 (initTime), which saves a search per
// record.
func (t *task) hasInput(in int32) bool {
	if t.byUpstream {
		return in >= 0 && int(in) < len(t.inputs)
	}
	return slices.Contains(t.inputs, in)
}

// input is the windows' input of record j of the batch.
func (a *aggregator) input(j int) int32 {
	if a.inputOf != nil {
		return a.inputOf(j)
	}
	return a.part
}

// applyProgress gives the windows of step s the batch's progress markers
// (a step with timers before it in the stage has read them too).
func (t *task) applyProgress(w *windowing.Windower, out *windowing.Output) error {
	for _, m := range t.marks {
		err := w.Progress(m.from, m.time, out)
		if errors.Is(err, windowing.ErrTimeRange) {
			// A node sends only times in range: this marker was forged
			// or damaged. It must not move the watermark, nor stop the
			// task on every restart.
			t.n.log.Warn("progress marker ignored", "partition", t.part, "input", m.from, "error", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// eventTimes gives the records their event time, as their timestamp, for
// aggregate step s: the guest's eddy_timestamp (time_function), a JSON
// field, the processing time, or the record timestamp as it is. Records
// without one, or whose event time is outside the valid range
// (windowing.MinTime to MaxTime, the years 0000 to 9999), go to the
// dead-letter topic. With time: log_append, a record
// whose timestamp is not the broker's append time is reported, once per
// task.
func (t *task) eventTimes(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	step := &t.n.p.Steps[s]
	if step.Time == TimeLogAppend && !t.warnedLogAppend {
		for j := range cur {
			if src[j] < 0 || b.records[src[j]].Attrs.TimestampType() == 1 { // a window result, or log-append time
				continue
			}
			t.warnedLogAppend = true
			t.n.log.Warn("time: log_append, but a record carries its producer's timestamp "+
				"(set message.timestamp.type=LogAppendTime on the topic); using it as the event time",
				"step", step.Name, "topic", b.records[src[j]].Topic, "partition", t.part, "offset", b.records[src[j]].Offset)
			break
		}
	}
	next, nsrc := cur[:0], src[:0]
	if inst := t.times[s]; inst != nil {
		res, err := inst.Timestamp(ctx, cur, t.results[:0])
		t.results = res
		if err != nil {
			return nil, nil, fmt.Errorf("time_function: %w", err)
		}
		for j := range cur {
			if e := res[j].Err; e != nil {
				t.failRecord(ctx, b, s, cur, src, j, e)
				continue
			}
			if err := windowing.CheckTime(res[j].Int); err != nil {
				t.failRecord(ctx, b, s, cur, src, j, noTime(step.Name, j, err))
				continue
			}
			r := cur[j]
			r.Timestamp = res[j].Int
			next, nsrc = append(next, r), append(nsrc, src[j])
		}
		return next, nsrc, nil
	}
	for j := range cur {
		// Without an extractor the record timestamp is the event time:
		// only its range is checked.
		ts := cur[j].Timestamp
		var err error
		if ex := t.extract[s]; ex != nil {
			ts, err = ex.Timestamp(&cur[j])
		}
		if err == nil {
			err = windowing.CheckTime(ts)
		}
		if err != nil {
			t.failRecord(ctx, b, s, cur, src, j, noTime(step.Name, j, err))
			continue
		}
		r := cur[j]
		r.Timestamp = ts
		next, nsrc = append(next, r), append(nsrc, src[j])
	}
	return next, nsrc, nil
}

// noTime is the dead-letter error of record j of a batch that has no
// usable event time: none could be extracted, or it is outside the valid
// range (windowing.CheckTime), for which the windows' arithmetic is not
// defined.
func noTime(step string, j int, err error) *runtime.Error {
	return &runtime.Error{Function: step, Kind: abi.KindTimestamp, Cause: runtime.CauseGuest, Code: abi.CodeBadInput,
		Index: j, Group: -1, Reason: err.Error()}
}
