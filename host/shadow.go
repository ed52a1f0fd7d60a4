package host

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/graph"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

// A shadow deploy runs a new version of a stateless step beside the live
// one, on the same input: after the live chain has run a batch, the task
// runs the shadowed step's input again through the shadow instance and the
// live instances of the steps after it, and writes the result to the shadow
// topic (ShadowTopic of the sink). While a shadow runs, live and shadow
// records carry the source record's topic, partition and offset
// (eddy.source.*), so that Diff can pair them. Shadow failures go to no
// dead-letter topic: they are counted, and show in a diff as records only in
// the live output.

// ShadowTopic is where a pipeline's shadow output goes.
func ShadowTopic(sink string) string { return sink + "-shadow" }

// Source headers of live and shadow records while a shadow runs.
const (
	HeaderSourceTopic     = "eddy.source.topic"
	HeaderSourcePartition = "eddy.source.partition"
	HeaderSourceOffset    = "eddy.source.offset"
)

func appendSource(hs []kgo.RecordHeader, orig *kgo.Record) []kgo.RecordHeader {
	return append(hs,
		kgo.RecordHeader{Key: HeaderSourceTopic, Value: []byte(orig.Topic)},
		kgo.RecordHeader{Key: HeaderSourcePartition, Value: strconv.AppendInt(nil, int64(orig.Partition), 10)},
		kgo.RecordHeader{Key: HeaderSourceOffset, Value: strconv.AppendInt(nil, orig.Offset, 10)})
}

// shadowable reports why step s cannot have a shadow ("" if it can): it
// must be a stateless map, filter or flat_map step of the last stage with
// no stateful step after it.
func (n *Node) shadowable(s int) string {
	step := n.p.Steps[s]
	switch {
	case step.Stateful() || step.Kind == StepKeyBy:
		return "step " + step.Name + " is a " + kindName(step) + " step: shadows run stateless map, filter and flat_map steps only"
	case !n.stages[len(n.stages)-1].Contains(s):
		return "step " + step.Name + " runs before a repartition: shadows run in the last stage only"
	case !n.p.Chain():
		return "the pipeline's steps name their inputs (from:, branches or outputs): shadows run in pipelines that are chains of steps only"
	case n.p.Sink.Topic == "":
		return "the pipeline has no sink, next to which a shadow writes its output"
	}
	for _, later := range n.p.Steps[s+1:] {
		if later.Stateful() {
			return "step " + later.Name + " after " + step.Name + " keeps state: a shadow would need its own copy of it"
		}
	}
	return ""
}

// stageShadow prepares a shadow change for the next transaction boundary:
// a new shadow version, or none (lf nil) after a promotion or discard.
func (n *Node) stageShadow(s int, lf *liveFn) {
	n.fnMu.Lock()
	defer n.fnMu.Unlock()
	if old := n.shadowStaged[s]; old != nil && old.fn != nil {
		old.fn.Close(context.WithoutCancel(n.runCtx))
	}
	if lf == nil {
		lf = &liveFn{} // a staged removal
	}
	n.shadowStaged[s] = lf
}

// onShadowEvent handles the registry events about shadows.
func (n *Node) onShadowEvent(s int, ev *registry.Event) {
	switch ev.Action {
	case registry.ActionPromote, registry.ActionDiscard:
		n.stageShadow(s, nil)
	case registry.ActionShadow:
		if why := n.shadowable(s); why != "" {
			n.log.Error("registry: shadow refused", "step", ev.Step, "version", ev.Version, "reason", why)
			return
		}
		parts, err := PartitionCount(n.runCtx, n.cfg.Brokers, n.p.Sink.Topic)
		if err == nil {
			err = CreateTopics(n.runCtx, n.cfg.Brokers, parts, ShadowTopic(n.p.Sink.Topic))
		}
		if err != nil {
			n.log.Error("registry: shadow topic", "topic", ShadowTopic(n.p.Sink.Topic), "error", err)
			return
		}
		var module []byte
		n.reg.view(func(st *registry.State) { module, _ = st.Module(ev.Digest) })
		cfg, err := n.eventConfig(s, ev.Config)
		var fn *runtime.Function
		if err == nil {
			fn, err = n.loadStepFunction(n.runCtx, s, module, cfg)
		}
		if err != nil {
			n.log.Error("registry: cannot load the shadow", "step", ev.Step, "version", ev.Version, "error", err)
			return
		}
		n.stageShadow(s, n.newLiveFn(fn, ev.Version, cfg))
		n.log.Info("shadow staged", "step", ev.Step, "version", ev.Version, "digest", registry.Short(ev.Digest),
			"topic", ShadowTopic(n.p.Sink.Topic))
	}
}

// applyShadowsLocked makes staged shadow changes current; n.fnMu is held.
// It returns the retired versions that no task uses.
func (n *Node) applyShadowsLocked() (changed bool, closing []*liveFn) {
	for s, lf := range n.shadowStaged {
		if lf == nil {
			continue
		}
		if old := n.shadowCur[s]; old != nil {
			old.retired = true
			if old.users == 0 {
				closing = append(closing, old)
			}
		}
		if lf.fn == nil {
			lf = nil
		}
		n.shadowCur[s], n.shadowStaged[s] = lf, nil
		changed = true
	}
	return changed, closing
}

// refreshShadow moves the task to the current shadow of its stage.
func (t *task) refreshShadow(ctx context.Context) {
	n := t.n
	at, lf := -1, (*liveFn)(nil)
	n.fnMu.Lock()
	for s := t.stage.From; s < t.stage.To; s++ {
		if n.shadowCur[s] != nil {
			at, lf = s, n.shadowCur[s]
			break
		}
	}
	n.fnMu.Unlock()
	if at == t.exec.ShadowAt && lf == t.shadowFn {
		return
	}
	if t.shadowInst != nil {
		n.release(ctx, t.shadowFn, t.shadowInst)
		t.shadowInst, t.shadowFn, t.exec.ShadowAt = nil, nil, -1
	}
	if lf == nil {
		return
	}
	inst, err := n.newInstance(ctx, lf)
	if err != nil {
		n.log.Error("shadow: cannot instantiate", "step", n.p.Steps[at].Name, "version", lf.version, "error", err)
		return
	}
	t.shadowInst, t.shadowFn, t.exec.ShadowAt = inst, lf, at
	t.shadowHeaders = t.shadowHeaders[:0]
	for s := t.stage.From; s < t.stage.To; s++ {
		v := t.fns[s]
		if s == at {
			v = lf
		}
		if v != nil {
			t.shadowHeaders = append(t.shadowHeaders, kgo.RecordHeader{Key: FunctionHeader(n.p.Steps[s].Name), Value: v.header})
		}
	}
}

// runShadow runs the shadowed step's input of a batch through the shadow
// and the live steps after it, to the shadow topic.
func (t *task) runShadow(ctx context.Context, b *batch, cur []abi.Record, src []int32) error {
	n := t.n
	var err error
	// A shadow's failures are only counted: the live steps dead-letter.
	at := t.exec.ShadowAt
	var failed int
	cur, src, _, failed, err = t.exec.RunFunction(ctx, at, graph.Func{Instance: t.shadowInst, Name: t.shadowFn.fn.Name()}, &t.shadowOut, cur, src, false)
	if err != nil {
		return err
	}
	n.stats.shadowFailed.Add(int64(failed))
	for s := at + 1; s < t.stage.To; s++ {
		if cur, src, _, failed, err = t.exec.RunFunction(ctx, s, t.exec.Steps[s], t.exec.Output(s), cur, src, false); err != nil {
			return err
		}
		n.stats.shadowFailed.Add(int64(failed))
	}
	topic := ShadowTopic(n.p.Sink.Topic)
	produced, now := 0, time.Now()
	for i := range cur {
		r := toKafka(topic, &cur[i])
		r.Headers = append(r.Headers, t.shadowHeaders...)
		if src[i] >= 0 { // not a window result
			r.Headers = appendSource(r.Headers, b.records[src[i]])
		}
		if why, _, bad := n.unproducible(r, "shadow output record", now); bad {
			// Counted as a shadow failure, like the others: a diff shows
			// the record as only in the live output.
			n.stats.shadowFailed.Add(1)
			n.log.Warn("shadow output dropped", "step", n.p.Steps[t.exec.ShadowAt].Name, "error", why)
			continue
		}
		t.produce(ctx, b, r)
		produced++
	}
	n.stats.shadowOut.Add(int64(produced))
	return nil
}
