package host

import (
	"context"
	"fmt"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// windowing returns the step's windowing configuration.
func (s *Step) windowing() (windowing.Config, error) {
	w := s.Window
	var spec windowing.Spec
	switch w.Type {
	case "tumbling":
		spec = windowing.Tumbling(w.Size)
	case "hopping":
		spec = windowing.Hopping(w.Size, w.Advance)
	case "sliding":
		spec = windowing.Sliding(w.Size)
	case "session":
		spec = windowing.Session(w.Gap)
	case "global":
		spec = windowing.GlobalCount(w.Count)
	default:
		return windowing.Config{}, fmt.Errorf("type must be tumbling, hopping, sliding, session or global, got %q", w.Type)
	}
	if w.Zone != "" {
		loc, err := time.LoadLocation(w.Zone)
		if err != nil {
			return windowing.Config{}, fmt.Errorf("zone: %w", err)
		}
		spec = spec.In(loc)
	}
	cfg := windowing.Config{Window: spec, Disorder: w.Disorder, Grace: w.Grace, IdleTimeout: w.IdleTimeout, Retention: w.Retention}
	if s.Emit == "update" {
		cfg.Emit = windowing.EmitUpdate
	}
	switch s.Time {
	case TimeProcessing:
		cfg.Time = windowing.ProcessingTime{Clock: time.Now}
	case TimeLogAppend:
		cfg.Time = windowing.LogAppendTime{}
	}
	if s.TimeField != "" {
		ex, err := windowing.NewJSONField(s.TimeField)
		if err != nil {
			return windowing.Config{}, err
		}
		cfg.Time = ex
	}
	return cfg, cfg.Validate()
}

// initTime decides where the task's records get their event time. Records
// get it (as their timestamp) in the task that runs the steps before an
// aggregate step: the task of the aggregate's own stage, or, when a
// repartition precedes it, the upstream task — whose downstream windows then
// keep a watermark per upstream input.
func (t *task) initTime() error {
	n := t.n
	st := t.stage
	t.timeStep = -1
	switch {
	case n.feedsWindows(st):
		t.timeStep = st.To
	case st.From > 0 && n.p.Steps[st.From].Kind == StepAggregate:
		t.byUpstream = true
		for i := range n.upstreamInputs(st) {
			t.inputs = append(t.inputs, i)
		}
	default:
		for i := st.From; i < st.To; i++ {
			if n.p.Steps[i].Kind == StepAggregate {
				t.timeStep = i
			}
		}
	}
	if len(t.inputs) == 0 {
		t.inputs = []int32{t.part}
	}
	if t.timeStep >= 0 {
		cfg, err := n.p.Steps[t.timeStep].windowing()
		if err != nil {
			return err
		}
		t.extract = cfg.Time
	}
	return nil
}

// windowConfig is the configuration of aggregate step s's windower. Its
// records carry their event time as their timestamp already (eventTimes).
func (t *task) windowConfig(s int) (windowing.Config, error) {
	cfg, err := t.n.p.Steps[s].windowing()
	cfg.Time = nil
	return cfg, err
}

// byInputs makes an aggregator of a stage that reads a repartition topic
// keep a watermark per upstream input.
func (t *task) byInputs(a *aggregator) error {
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
	return restoreInputTimes(a.store.st, func(in int32, at int64) error { return a.w.Progress(in, at, &out) })
}

// input is the windows' input of record j of the batch.
func (a *aggregator) input(j int) int32 {
	if a.inputOf != nil {
		return a.inputOf(j)
	}
	return a.part
}

// applyProgress gives the windows of step s the batch's progress markers.
func (t *task) applyProgress(w *windowing.Windower, out *windowing.Output) error {
	for _, m := range t.marks {
		if err := w.Progress(m.from, m.time, out); err != nil {
			return err
		}
	}
	t.marks = t.marks[:0]
	return nil
}

// eventTimes gives the records their event time, as their timestamp, for
// aggregate step s: the guest's eddy_timestamp (time_function), a JSON
// field, the processing time, or the record timestamp as it is. Records
// without one go to the dead-letter topic. With time: log_append, a record
// whose timestamp is not the broker's append time is reported, once per
// task.
func (t *task) eventTimes(ctx context.Context, b *batch, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	step := &t.n.p.Steps[s]
	if step.Time == TimeLogAppend && !t.warnedLogAppend {
		for j := range cur {
			if b.records[src[j]].Attrs.TimestampType() == 1 { // log-append time
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
				t.deadLetter(ctx, b, b.records[src[j]], s, e)
				continue
			}
			r := cur[j]
			r.Timestamp = res[j].Int
			next, nsrc = append(next, r), append(nsrc, src[j])
		}
		return next, nsrc, nil
	}
	if t.extract == nil {
		return cur, src, nil
	}
	for j := range cur {
		ts, err := t.extract.Timestamp(&cur[j])
		if err != nil {
			t.deadLetter(ctx, b, b.records[src[j]], s, &runtime.Error{Function: step.Name, Kind: abi.KindTimestamp,
				Cause: runtime.CauseGuest, Code: abi.CodeBadInput, Index: j, Group: -1, Reason: err.Error()})
			continue
		}
		r := cur[j]
		r.Timestamp = ts
		next, nsrc = append(next, r), append(nsrc, src[j])
	}
	return next, nsrc, nil
}
