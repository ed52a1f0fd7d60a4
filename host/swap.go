package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

// liveFn is one version of a step's function.
type liveFn struct {
	fn      *runtime.Function
	version int // its registry version; 0 is the pipeline file's module
	// header is the value of the eddy.function.<step> header of the
	// records it produces: "v<version> sha256:<digest>[ config:<hash>]".
	header []byte
	// cfg is the config it runs with (secrets read: never shown; status
	// shows cfg.entries).
	cfg versionConfig
	// users counts task instances of fn; retired is set when a newer
	// version replaces it. fn is closed when both say it is unused.
	// Guarded by Node.fnMu.
	users   int
	retired bool
}

// newLiveFn is version of a step's function fn, run with cfg. Its header
// names the version and the module, and the config when there is one (a
// hash of the values and of where secrets come from: ConfigDigestOf).
func (n *Node) newLiveFn(fn *runtime.Function, version int, cfg versionConfig) *liveFn {
	h := "v" + strconv.Itoa(version) + " sha256:" + fn.Digest()
	if cfg.digest != "" {
		h += " config:" + cfg.digest
	}
	return &liveFn{fn: fn, version: version, header: []byte(h), cfg: cfg}
}

// versionConfig is the config a version of a step's function runs with:
// its entries (values, and where secrets come from), their values with the
// secrets read, and the entries' digest for the version header.
type versionConfig struct {
	entries map[string]pipeline.ConfigValue
	values  map[string][]byte
	digest  string
}

// eventConfig is the config of the version ev makes live or shadow: the
// pipeline file's when ev carries none (registry.Event.Config), else ev's,
// its secrets read on this node. An error names the entry and where its
// secret should have come from, never a value.
func (n *Node) eventConfig(s int, cfg map[string]registry.ConfigEntry) (versionConfig, error) {
	if cfg == nil {
		return n.configs[s], nil
	}
	entries := make(map[string]pipeline.ConfigValue, len(cfg))
	for name, c := range cfg {
		entries[name] = pipeline.ConfigValue{Value: c.Value, Env: c.Env, File: c.File}
	}
	if err := pipeline.CheckConfig(entries); err != nil {
		return versionConfig{}, err
	}
	vals, err := n.p.ResolveStepConfig(s, entries, n.lookupEnv)
	if err != nil {
		return versionConfig{}, err
	}
	return versionConfig{entries: entries, values: vals, digest: pipeline.ConfigDigestOf(entries)}, nil
}

// FunctionHeader is the header naming the version of step's function that
// produced a record.
func FunctionHeader(step string) string { return "eddy.function." + step }

// loadFunction compiles a module for step i with its limits (the step's,
// else the pipeline's) and config cfg.
func (n *Node) loadFunction(ctx context.Context, i int, wasm []byte, cfg versionConfig) (*runtime.Function, error) {
	p := n.p
	memory, timeout := p.FunctionLimits(i)
	return n.cfg.Engine.Load(ctx, p.Steps[i].Name, wasm,
		runtime.WithMemoryLimit(int(memory)), runtime.WithCallTimeout(timeout), runtime.WithConfig(cfg.values),
		runtime.WithLogger(n.log.With("step", p.Steps[i].Name)))
}

// NativePrefix marks a step function that is a Go function of
// NodeConfig.Natives rather than a .wasm file.
const NativePrefix = "native:"

// loadNative loads step i's native function.
func (n *Node) loadNative(i int, name string) (*runtime.Function, error) {
	f, ok := n.cfg.Natives[name]
	if !ok {
		return nil, fmt.Errorf("no native function %q in this binary", name)
	}
	return n.cfg.Engine.LoadNativeFunc(n.p.Steps[i].Name, f, runtime.WithLogger(n.log.With("step", n.p.Steps[i].Name)))
}

// current returns step s's live function.
func (n *Node) current(s int) *liveFn {
	n.fnMu.Lock()
	defer n.fnMu.Unlock()
	return n.cur[s]
}

// errRetiredFn: the version asked for was replaced and its function closed
// before an instance of it could be made.
var errRetiredFn = errors.New("function version replaced and closed")

// newInstance creates an instance of lf for a task. The instance counts as
// a user of lf from before it is made, so that a swap retiring lf meanwhile
// does not close the function under it; a version already retired and
// closed is refused (errRetiredFn).
func (n *Node) newInstance(ctx context.Context, lf *liveFn) (*runtime.Instance, error) {
	n.fnMu.Lock()
	if lf.retired && lf.users == 0 {
		n.fnMu.Unlock()
		return nil, errRetiredFn
	}
	lf.users++
	n.fnMu.Unlock()
	return n.instantiate(ctx, lf)
}

// currentInstance creates an instance of step s's current version, which
// it reads and claims in one hold of fnMu: a current version is never
// retired, so it cannot be closed before the instance exists. It returns a
// nil liveFn for a step without a function.
func (n *Node) currentInstance(ctx context.Context, s int) (*liveFn, *runtime.Instance, error) {
	n.fnMu.Lock()
	lf := n.cur[s]
	if lf == nil {
		n.fnMu.Unlock()
		return nil, nil, nil
	}
	lf.users++
	n.fnMu.Unlock()
	inst, err := n.instantiate(ctx, lf)
	return lf, inst, err
}

// instantiate makes an instance of lf, whose user count already includes
// it; a failure gives the count back.
func (n *Node) instantiate(ctx context.Context, lf *liveFn) (*runtime.Instance, error) {
	inst, err := lf.fn.NewInstance(ctx)
	if err != nil {
		n.unuse(ctx, lf)
		return nil, err
	}
	return inst, nil
}

// release closes a task's instance of lf, and lf's function once it is
// retired and unused.
func (n *Node) release(ctx context.Context, lf *liveFn, inst *runtime.Instance) {
	inst.Close(context.WithoutCancel(ctx))
	n.unuse(ctx, lf)
}

// unuse takes one user from lf and closes its function once it is retired
// and unused.
func (n *Node) unuse(ctx context.Context, lf *liveFn) {
	n.fnMu.Lock()
	lf.users--
	done := lf.retired && lf.users == 0
	n.fnMu.Unlock()
	if done {
		lf.fn.Close(context.WithoutCancel(ctx))
	}
}

// retire releases a replaced instance off the task's path: the node's
// closer goroutine closes it (inline when the closer is busy or gone).
func (n *Node) retire(ctx context.Context, lf *liveFn, inst *runtime.Instance) {
	select {
	case n.retired <- retiredInst{lf, inst}:
	default:
		n.release(ctx, lf, inst)
	}
}

type retiredInst struct {
	lf   *liveFn
	inst *runtime.Instance
}

// closeRetired releases retired instances until the channel is closed.
func (n *Node) closeRetired(ctx context.Context) {
	for r := range n.retired {
		n.release(ctx, r.lf, r.inst)
	}
}

// stepIndex returns the index of the named step, or -1.
func (n *Node) stepIndex(name string) int {
	for i, s := range n.p.Steps {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// useRegistry makes the registry's live versions of the pipeline's steps
// current, before any task starts. A live version that does not load (a
// module the registry holds but that is not one this step can run) does not
// stop the node: it falls back to the latest earlier version that loads,
// or the pipeline file's module, and says so loudly (log, status, metric),
// as a running node keeps its version when a new one does not load.
func (n *Node) useRegistry(ctx context.Context) error {
	for i, s := range n.p.Steps {
		var cands []registry.Event
		modules := map[string][]byte{}
		n.reg.view(func(st *registry.State) {
			ss := st.Step(n.p.Name, s.Name)
			if ss.Live == nil {
				return
			}
			// The live version, then the earlier ones that made a module
			// live, latest first.
			cands = append(cands, *ss.Live)
			for j := ss.Live.Version - 2; j >= 0; j-- {
				switch e := ss.History[j]; e.Action {
				case registry.ActionDeploy, registry.ActionRollback, registry.ActionPromote:
					cands = append(cands, e)
				}
			}
			for _, e := range cands {
				modules[e.Digest], _ = st.Module(e.Digest)
			}
		})
		for k, live := range cands {
			cfg, err := n.eventConfig(i, live.Config)
			var fn *runtime.Function
			if err == nil {
				fn, err = n.loadStepFunction(ctx, i, modules[live.Digest], cfg)
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				n.stats.badVersions.Add(1)
				n.log.Error("registry: a version of the step does not load; trying the one before it (eddy functions rollback or a deploy fixes it)",
					"step", s.Name, "version", live.Version, "digest", registry.Short(live.Digest), "error", err)
				if k == len(cands)-1 {
					n.log.Error("registry: no version of the step loads; running the pipeline file's module", "step", s.Name)
				}
				continue
			}
			n.fnMu.Lock()
			old := n.cur[i]
			n.cur[i] = n.newLiveFn(fn, live.Version, cfg)
			n.fnMu.Unlock()
			if old != nil {
				old.fn.Close(context.WithoutCancel(ctx))
			}
			if k > 0 {
				n.log.Error("registry: running an earlier version than the live one, which does not load", "step", s.Name,
					"version", live.Version, "live", cands[0].Version)
			}
			n.log.Info("function from the registry", "step", s.Name, "version", live.Version, "digest", registry.Short(live.Digest))
			break
		}
	}
	return nil
}

// onRegistryEvent stages the new live version of one of the pipeline's
// steps; the poll loop makes it current at the next transaction boundary
// (applySwaps). Called by the registry's tail loop.
func (n *Node) onRegistryEvent(ev *registry.Event) {
	if ev.Pipeline != n.p.Name {
		return
	}
	s := n.stepIndex(ev.Step)
	if s < 0 {
		n.log.Warn("registry: event for a step this pipeline does not have", "step", ev.Step, "version", ev.Version)
		return
	}
	switch ev.Action {
	case registry.ActionShadow, registry.ActionDiscard:
		n.onShadowEvent(s, ev)
		return
	case registry.ActionPromote:
		n.onShadowEvent(s, ev)
	}
	var module []byte
	n.reg.view(func(st *registry.State) { module, _ = st.Module(ev.Digest) })
	cfg, err := n.eventConfig(s, ev.Config)
	var fn *runtime.Function
	if err == nil {
		fn, err = n.loadStepFunction(n.runCtx, s, module, cfg)
	}
	if err != nil {
		n.stats.badVersions.Add(1)
		n.log.Error("registry: cannot load the new version; keeping the current one", "step", ev.Step,
			"version", ev.Version, "error", err)
		return
	}
	// Instances first, then staging: the swap never waits for them.
	lf := n.newLiveFn(fn, ev.Version, cfg)
	n.prepare(s, lf)
	n.fnMu.Lock()
	if old := n.staged[s]; old != nil {
		old.fn.Close(context.WithoutCancel(n.runCtx))
	}
	n.staged[s] = lf
	n.fnMu.Unlock()
	n.log.Info("new version staged", "step", ev.Step, "version", ev.Version, "action", ev.Action,
		"digest", registry.Short(ev.Digest))
}

// prepare creates an instance of a staged version for every task that runs
// step s, ahead of the swap, so that a task's pause at the swap does not
// include instantiating the module.
func (n *Node) prepare(s int, lf *liveFn) {
	n.mu.Lock()
	var ts []*task
	for _, t := range n.mu.groups {
		if t.stage.Contains(s) {
			ts = append(ts, t)
		}
	}
	n.mu.Unlock()
	for _, t := range ts {
		inst, err := n.newInstance(n.runCtx, lf)
		if err != nil {
			return // the task instantiates it itself at the swap, and reports
		}
		t.prepMu.Lock()
		old := t.prepared[s]
		if t.prepared == nil {
			t.prepared = map[int]preparedInst{}
		}
		t.prepared[s] = preparedInst{lf, inst}
		t.prepMu.Unlock()
		if old.inst != nil {
			n.release(n.runCtx, old.lf, old.inst)
		}
	}
}

// preparedInst is an instance created ahead of a swap.
type preparedInst struct {
	lf   *liveFn
	inst *runtime.Instance
}

// takePrepared returns the task's prepared instance of lf for step s, if
// any; a prepared instance of another version is released.
func (t *task) takePrepared(ctx context.Context, s int, lf *liveFn) *runtime.Instance {
	t.prepMu.Lock()
	p, ok := t.prepared[s]
	delete(t.prepared, s)
	t.prepMu.Unlock()
	if !ok {
		return nil
	}
	if p.lf != lf {
		t.n.release(ctx, p.lf, p.inst)
		return nil
	}
	return p.inst
}

// releasePrepared releases the instances prepared for a task that stops.
func (t *task) releasePrepared(ctx context.Context) {
	t.prepMu.Lock()
	ps := t.prepared
	t.prepared = nil
	t.prepMu.Unlock()
	for _, p := range ps {
		t.n.release(ctx, p.lf, p.inst)
	}
}

// applySwaps makes staged versions current. Tasks switch to them before
// their next batch; the poll loop calls it only between transactions, so
// that every transaction runs one version of each step.
func (n *Node) applySwaps(ctx context.Context) {
	n.fnMu.Lock()
	var closing []*liveFn
	swapped := false
	for s, lf := range n.staged {
		if lf == nil {
			continue
		}
		old := n.cur[s]
		old.retired = true
		if old.users == 0 {
			closing = append(closing, old)
		}
		n.cur[s], n.staged[s] = lf, nil
		swapped = true
	}
	shadows, retired := n.applyShadowsLocked()
	swapped = swapped || shadows
	closing = append(closing, retired...)
	n.fnMu.Unlock()
	if swapped {
		n.gen.Add(1)
	}
	for _, lf := range closing {
		lf.fn.Close(context.WithoutCancel(ctx))
	}
}

// refresh moves the task's instances to the current versions when they
// changed since its last batch. A version that cannot be instantiated is
// reported and the task keeps its instance.
func (t *task) refresh(ctx context.Context) {
	n := t.n
	g := n.gen.Load()
	if g == t.gen {
		return
	}
	began := time.Now()
	defer func() { n.recordPause(time.Since(began)) }()
	t.gen = g
	for s := t.stage.From; s < t.stage.To; s++ {
		lf := n.current(s)
		if lf == nil || lf == t.fns[s] {
			continue
		}
		inst := t.takePrepared(ctx, s, lf)
		if inst == nil {
			var err error
			// A version replaced again since current is refused here; the
			// next one's swap brings this task to it.
			if inst, err = n.newInstance(ctx, lf); errors.Is(err, errRetiredFn) {
				continue
			} else if err != nil {
				n.log.Error("new version: cannot instantiate; keeping the current one", "step", n.p.Steps[s].Name,
					"version", lf.version, "error", err)
				continue
			}
		}
		if n.p.Steps[s].State {
			inst.SetState(t.stores[s].st)
		}
		if tm := t.timers[s]; tm != nil {
			inst.SetTimers(tm)
		}
		if tw := t.windows[s]; tw != nil {
			tw.agg.setFunc(inst)
		}
		n.retire(ctx, t.fns[s], t.inst(s))
		t.setFunction(s, inst, lf)
	}
	t.setHeaders()
	t.refreshShadow(ctx)
}

// setHeaders builds the function headers of the records the task produces.
func (t *task) setHeaders() {
	t.headers = t.headers[:0]
	for s := t.stage.From; s < t.stage.To; s++ {
		if lf := t.fns[s]; lf != nil {
			t.headers = append(t.headers, kgo.RecordHeader{Key: FunctionHeader(t.n.p.Steps[s].Name), Value: lf.header})
		}
	}
}

// swapPauses keeps the latest processing pauses of tasks at swaps: the time
// a task spent switching to new versions before a batch.
type swapPauses struct {
	mu     sync.Mutex
	pauses []time.Duration // a ring of the latest maxPauses
	next   int
}

const maxPauses = 4096

func (n *Node) recordPause(d time.Duration) {
	n.metrics.swapPause.Observe(d.Seconds())
	p := &n.pauses
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pauses) < maxPauses {
		p.pauses = append(p.pauses, d)
		return
	}
	p.pauses[p.next] = d
	p.next = (p.next + 1) % maxPauses
}

// SwapPauses returns the latest pauses of tasks at function swaps (up to
// 4096), sorted.
func (n *Node) SwapPauses() []time.Duration {
	n.pauses.mu.Lock()
	out := slices.Clone(n.pauses.pauses)
	n.pauses.mu.Unlock()
	slices.Sort(out)
	return out
}
