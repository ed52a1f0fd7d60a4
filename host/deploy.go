package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/jsonl"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

// DeployError is a deploy, rollback, promotion or discard the node refused;
// nothing changed. Code says why: not_found (no such step), invalid_module
// (it does not compile, speaks another ABI, imports what the host does not
// provide, fails its probe, or cannot be a shadow), incompatible_module (a
// module the node can run, but not in this step: checkFit), invalid_config
// (config over the limits, or a secret this node cannot read),
// smoke_test_failed, conflict (nothing to roll back to, no shadow, a
// concurrent event).
type DeployError struct {
	Code   string
	Reason string
}

func (e *DeployError) Error() string { return e.Code + ": " + e.Reason }

func deployErr(code, format string, args ...any) *DeployError {
	return &DeployError{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// Deployment is a request to deploy a module to a step.
type Deployment struct {
	Step   string
	Module []byte
	Note   string
	// Shadow runs the module beside the live version instead of replacing
	// it.
	Shadow bool
	// Sample and Expect, JSON lines, are an optional smoke test: the module
	// must turn Sample's records into exactly Expect's.
	Sample, Expect []byte
	// Config, if not nil, is the config the new version runs with instead
	// of the live version's (registry.Event.Config): values, and where
	// each node reads secrets from. The deploying node must be able to
	// read them; a node that cannot keeps its current version and logs
	// why.
	Config map[string]registry.ConfigEntry
}

// kindFor is the export a step's function must have.
func kindFor(k StepKind) abi.Kind {
	switch k {
	case StepAggregate:
		return abi.KindAggregate
	case StepKeyBy:
		return abi.KindKey
	case StepJoin:
		return abi.KindJoin
	}
	return abi.KindProcess
}

// Deploy validates a module for one of the pipeline's steps and publishes it
// in the registry; every node running the pipeline (this one included)
// swaps to it at its next transaction boundary. A module that fails
// validation changes nothing: the error is a *DeployError saying why.
func (n *Node) Deploy(ctx context.Context, d Deployment) (registry.Event, error) {
	s := n.stepIndex(d.Step)
	if s < 0 {
		return registry.Event{}, deployErr("not_found", "pipeline %s has no step %q", n.p.Name, d.Step)
	}
	step := n.p.Steps[s]
	if step.Kind == StepKeyBy && step.Field != "" {
		return registry.Event{}, deployErr("invalid_module", "step %s keys by the field %s: it runs no function", step.Name, step.Field)
	}
	if step.Kind == stepOutput {
		return registry.Event{}, deployErr("invalid_module", "step %s is %s of step %s: it runs no function", step.Name,
			strings.TrimPrefix(step.Name, step.Part.Of+"."), step.Part.Of)
	}
	if step.Kind == StepJoin && n.current(s) == nil {
		return registry.Event{}, deployErr("invalid_module", "step %s nests both sides' values: it runs no function (give it one in the pipeline file first)", step.Name)
	}
	if d.Shadow {
		if why := n.shadowable(s); why != "" {
			return registry.Event{}, deployErr("invalid_module", "%s", why)
		}
	}
	cfg := n.configs[s]
	if lf := n.current(s); lf != nil {
		cfg = lf.cfg // the live version's, which the new one carries on
	}
	if d.Config != nil {
		var err error
		if cfg, err = n.eventConfig(s, d.Config); err != nil {
			return registry.Event{}, deployErr("invalid_config", "step %s: %v", step.Name, err)
		}
	}
	fn, err := n.loadFunction(ctx, s, d.Module, cfg)
	if err != nil {
		return registry.Event{}, deployErr("invalid_module", "%v", err)
	}
	defer fn.Close(context.WithoutCancel(ctx))
	m := fn.Manifest()
	if err := checkFit(step, fn); err != nil {
		return registry.Event{}, deployErr("incompatible_module", "the module does not fit step %s: %v", step.Name, err)
	}
	if err := probe(ctx, fn, step); err != nil {
		return registry.Event{}, err
	}
	if len(d.Sample) > 0 || len(d.Expect) > 0 {
		if err := smokeTest(ctx, fn, step, d.Sample, d.Expect); err != nil {
			return registry.Event{}, err
		}
	}
	if err := n.publishBaseline(ctx, s); err != nil {
		return registry.Event{}, err
	}
	action := registry.ActionDeploy
	if d.Shadow {
		action = registry.ActionShadow
	}
	return n.publish(ctx, d.Module, registry.Event{Pipeline: n.p.Name, Step: step.Name, Action: action,
		Digest: registry.Digest(d.Module), Name: m.Name, FunctionVersion: m.Version, Size: len(d.Module), Note: d.Note,
		Config: d.Config})
}

func kindName(s Step) string {
	if s.State {
		return "stateful " + string(s.Kind)
	}
	return string(s.Kind)
}

// Rollback makes an earlier version of a step live again: target, or the
// version live before the current one when target is 0.
func (n *Node) Rollback(ctx context.Context, step string, target int, note string) (registry.Event, error) {
	if n.stepIndex(step) < 0 {
		return registry.Event{}, deployErr("not_found", "pipeline %s has no step %q", n.p.Name, step)
	}
	return n.publish(ctx, nil, registry.Event{Pipeline: n.p.Name, Step: step, Action: registry.ActionRollback, Target: target, Note: note})
}

// Promote makes a step's shadow live.
func (n *Node) Promote(ctx context.Context, step, note string) (registry.Event, error) {
	if n.stepIndex(step) < 0 {
		return registry.Event{}, deployErr("not_found", "pipeline %s has no step %q", n.p.Name, step)
	}
	return n.publish(ctx, nil, registry.Event{Pipeline: n.p.Name, Step: step, Action: registry.ActionPromote, Note: note})
}

// Discard drops a step's shadow.
func (n *Node) Discard(ctx context.Context, step, note string) (registry.Event, error) {
	if n.stepIndex(step) < 0 {
		return registry.Event{}, deployErr("not_found", "pipeline %s has no step %q", n.p.Name, step)
	}
	return n.publish(ctx, nil, registry.Event{Pipeline: n.p.Name, Step: step, Action: registry.ActionDiscard, Note: note})
}

// publishBaseline records the pipeline file's module as a step's first
// version, before the step's first deploy, so that a rollback can return
// to it.
func (n *Node) publishBaseline(ctx context.Context, s int) error {
	step := n.p.Steps[s]
	select {
	case <-n.regReady:
	case <-ctx.Done():
		return fmt.Errorf("host: waiting for the node to start: %w", ctx.Err())
	}
	empty := false
	n.reg.view(func(st *registry.State) { empty = len(st.Step(n.p.Name, step.Name).History) == 0 })
	if !empty {
		return nil
	}
	module, err := os.ReadFile(n.p.FunctionPath(s))
	if err != nil {
		return fmt.Errorf("the pipeline file's module: %w", err)
	}
	if n.current(s).fn.Digest() != registry.Digest(module) {
		return deployErr("conflict", "%s changed on disk since the node started; restart the node or deploy through the registry", n.p.FunctionPath(s))
	}
	m := n.current(s).fn.Manifest()
	ev, err := n.number(ctx, registry.Event{Pipeline: n.p.Name, Step: step.Name, Action: registry.ActionDeploy,
		Digest: registry.Digest(module), Name: m.Name, FunctionVersion: m.Version, Size: len(module),
		Note: "the pipeline file's module (" + step.Function + ")"}, module)
	if err != nil {
		return err
	}
	if ev.Version != 1 {
		return nil // another node recorded it meanwhile
	}
	if _, err := n.reg.publish(ctx, module, ev); err != nil && !errors.Is(err, ErrConflict) {
		return err
	}
	return nil // published, or another node's baseline took version 1
}

// number gives an event its version number and completes it.
func (n *Node) number(ctx context.Context, ev registry.Event, module []byte) (registry.Event, error) {
	if n.cfg.RegistryKey == nil && !n.cfg.UnsignedRegistry {
		return ev, deployErr("conflict", "this node has no registry key to sign the event with, and its pipeline's nodes refuse unsigned events: start it with the admin token")
	}
	if len(ev.Note) > registry.MaxNoteSize {
		return ev, deployErr("bad_request", "a note of %d bytes: at most %d", len(ev.Note), registry.MaxNoteSize)
	}
	select {
	case <-n.regReady:
	case <-ctx.Done():
		return ev, fmt.Errorf("host: waiting for the node to start: %w", ctx.Err())
	}
	ev.Node, ev.Time = n.cfg.NodeID, time.Now().UTC()
	var err error
	n.reg.view(func(st *registry.State) { ev, err = st.Next(ev, module) })
	if err != nil {
		return ev, deployErr("conflict", "%v", err)
	}
	return ev, nil
}

// publish numbers an event, writes it and waits until it took effect,
// retrying when another node's event took its number.
func (n *Node) publish(ctx context.Context, module []byte, ev registry.Event) (registry.Event, error) {
	for try := 0; ; try++ {
		next, err := n.number(ctx, ev, module)
		if err != nil {
			return ev, err
		}
		got, err := n.reg.publish(ctx, module, next)
		if errors.Is(err, ErrConflict) && try < 3 {
			continue
		}
		if errors.Is(err, ErrConflict) {
			return ev, deployErr("conflict", "%v", err)
		}
		if err == nil {
			n.log.Info("registry event published", "step", got.Step, "version", got.Version, "action", got.Action,
				"digest", registry.Short(got.Digest), "note", got.Note)
		}
		return got, err
	}
}

// probeRecords are what every new module is run on before it is accepted.
var probeRecords = []abi.Record{
	{Key: []byte("eddy-probe"), Value: []byte(`{"probe":1,"text":"hello world"}`), Timestamp: 1700000000000,
		Headers: []abi.Header{{Key: "eddy.probe", Value: []byte("1")}}},
	{Value: []byte("42"), Timestamp: 1700000000001},
	{},
}

// probe calls a new module's step kind on a few records, in a fresh
// instance: a module that traps, loops, runs out of memory, answers
// malformed output, or (for a map step) does not return one record per
// input, is refused before it goes live. Records the function refuses with
// an error code of its own are fine: probes are not its input.
func probe(ctx context.Context, fn *runtime.Function, step Step) error {
	inst, err := fn.NewInstance(ctx)
	if err != nil {
		return deployErr("invalid_module", "instantiate: %v", err)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	hostile := func(e *runtime.Error) error {
		if e == nil || e.Cause == runtime.CauseGuest {
			return nil
		}
		return deployErr("invalid_module", "probe call failed: %v", e)
	}
	call := func(err error) error {
		var re *runtime.Error
		if errors.As(err, &re) {
			return hostile(re)
		}
		if err != nil {
			return deployErr("invalid_module", "probe call failed: %v", err)
		}
		return nil
	}
	switch kindFor(step.Kind) {
	case abi.KindProcess:
		var out runtime.Output
		if err := call(inst.Process(ctx, probeRecords, &out)); err != nil {
			return err
		}
		failed := map[int]bool{}
		for _, e := range out.Failed {
			if err := hostile(e); err != nil {
				return err
			}
			failed[e.Index] = true
		}
		if step.Kind == StepMap {
			counts := make([]int, len(probeRecords))
			for _, f := range out.From {
				counts[f]++
			}
			for i, c := range counts {
				if c != 1 && !failed[i] {
					return deployErr("invalid_module", "step %s is a map step, but the module returned %d records for probe record %d", step.Name, c, i+1)
				}
			}
		}
	case abi.KindJoin:
		k := [][]byte{[]byte("k"), nil, []byte("k")}
		l := [][]byte{probeRecords[0].Value, []byte("42"), nil}
		r := [][]byte{[]byte(`{"probe":2}`), nil, []byte("x")}
		res, err := inst.Join(ctx, k, l, r, nil)
		if err := call(err); err != nil {
			return err
		}
		for _, r := range res {
			if err := hostile(r.Err); err != nil {
				return err
			}
		}
	case abi.KindKey:
		res, err := inst.Key(ctx, probeRecords, nil)
		if err := call(err); err != nil {
			return err
		}
		for _, r := range res {
			if err := hostile(r.Err); err != nil {
				return err
			}
		}
	case abi.KindAggregate:
		acc, err := inst.AggInit(ctx)
		if err := call(err); err != nil {
			return err
		}
		added, failed, err := inst.AggAdd(ctx, []abi.Group{{Key: []byte("k"), Acc: acc, Records: probeRecords}}, nil, nil)
		if err := call(err); err != nil {
			return err
		}
		for _, e := range failed {
			if err := hostile(e); err != nil {
				return err
			}
		}
		if len(added) == 1 && added[0].Acc != nil {
			acc = added[0].Acc
		}
		res, err := inst.AggResult(ctx, [][]byte{[]byte("k")}, [][]byte{acc}, nil)
		if err := call(err); err != nil {
			return err
		}
		for _, r := range res {
			if err := hostile(r.Err); err != nil {
				return err
			}
		}
	}
	return nil
}

// smokeTest runs sample through a new module and compares its output with
// expect, record by record, as JSON lines.
func smokeTest(ctx context.Context, fn *runtime.Function, step Step, sample, expect []byte) error {
	if kindFor(step.Kind) != abi.KindProcess {
		return deployErr("smoke_test_failed", "smoke tests run map, filter and flat_map steps; %s is a %s step", step.Name, step.Kind)
	}
	in, err := jsonl.NewReader(bytes.NewReader(sample)).ReadAll()
	if err != nil {
		return deployErr("smoke_test_failed", "sample: %v", err)
	}
	want, err := jsonl.NewReader(bytes.NewReader(expect)).ReadAll()
	if err != nil {
		return deployErr("smoke_test_failed", "expect: %v", err)
	}
	checkOutput := expect != nil // a sample alone only has to run without failures
	inst, err := fn.NewInstance(ctx)
	if err != nil {
		return deployErr("invalid_module", "%v", err)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	var out runtime.Output
	if err := inst.Process(ctx, in, &out); err != nil {
		return deployErr("smoke_test_failed", "%v", err)
	}
	if len(out.Failed) > 0 {
		return deployErr("smoke_test_failed", "sample record %d: %v", out.Failed[0].Index+1, out.Failed[0])
	}
	if !checkOutput {
		return nil
	}
	got := linesOf(out.Records)
	exp := linesOf(want)
	for i := 0; i < max(len(got), len(exp)); i++ {
		switch {
		case i >= len(got):
			return deployErr("smoke_test_failed", "output has %d records, expected %d; first missing: %s", len(got), len(exp), exp[i])
		case i >= len(exp):
			return deployErr("smoke_test_failed", "output has %d records, expected %d; first extra: %s", len(got), len(exp), got[i])
		case got[i] != exp[i]:
			return deployErr("smoke_test_failed", "output record %d is %s, expected %s", i+1, got[i], exp[i])
		}
	}
	return nil
}

func linesOf(recs []abi.Record) []string {
	if len(recs) == 0 {
		return nil
	}
	var b bytes.Buffer
	w := jsonl.NewWriter(&b)
	for i := range recs {
		w.Write(&recs[i])
	}
	w.Flush()
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}
