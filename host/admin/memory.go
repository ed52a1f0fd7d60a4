package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/registry"
)

// MemoryBackend is a [Backend] that keeps a [registry.State] in memory and
// runs nothing: a fake for tests of the API, of clients and of the CLI, and
// a small worked example of the Backend contract. A node implements
// Backend itself; do not use this one to serve a real node.
//
// It applies events through the registry's own records, as a node does, so
// versions, rollback targets and shadows behave as in production. It
// checks a module only for the Wasm header (see Inspect), and its smoke
// test takes the module for the identity function: Expect must equal
// Sample, line by line.
//
// Set the exported fields before the first call; the methods are then safe
// for concurrent use.
type MemoryBackend struct {
	// Node names the node in events (default "memory").
	Node string
	// Now is the clock of events (default time.Now, in UTC).
	Now func() time.Time
	// Inspect, if set, replaces the module check: it returns the module's
	// function name and version, or an error that rejects the deploy (an
	// *Error as it should be answered; any other error is answered as 422
	// invalid_module).
	Inspect func(req DeployRequest) (name, version string, err error)

	mu struct {
		sync.Mutex
		state  *registry.State
		steps  map[registry.StepKey]bool // nil: any step exists
		calls  int
		health error
	}
}

// NewMemoryBackend returns a MemoryBackend whose pipelines have the steps
// given; with none, every pipeline and step exists.
func NewMemoryBackend(steps ...registry.StepKey) *MemoryBackend {
	m := &MemoryBackend{}
	m.mu.state = registry.NewState()
	if len(steps) > 0 {
		m.mu.steps = map[registry.StepKey]bool{}
		for _, k := range steps {
			m.mu.steps[k] = true
		}
	}
	return m
}

// Calls returns how many Backend calls the backend has had.
func (m *MemoryBackend) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.calls
}

// SetHealth makes Health return err (nil: healthy).
func (m *MemoryBackend) SetHealth(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.health = err
}

// Module returns a deployed module by digest.
func (m *MemoryBackend) Module(digest string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.state.Module(digest)
}

// enter counts a call and takes the lock; the caller unlocks.
func (m *MemoryBackend) enter(ctx context.Context) error {
	m.mu.Lock()
	m.mu.calls++
	return ctx.Err()
}

// Health implements Backend.Health.
func (m *MemoryBackend) Health(ctx context.Context) error {
	defer m.mu.Unlock()
	if err := m.enter(ctx); err != nil {
		return err
	}
	return m.mu.health
}

// Cluster implements Backend.Cluster: a group of one, this backend.
func (m *MemoryBackend) Cluster(ctx context.Context) (any, error) {
	st, err := m.Status(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"nodes": []any{st}}, nil
}

// Status implements Backend.Status.
func (m *MemoryBackend) Status(ctx context.Context) (any, error) {
	defer m.mu.Unlock()
	if err := m.enter(ctx); err != nil {
		return nil, err
	}
	steps := m.stepsLocked("")
	events := 0
	for _, st := range steps {
		events += len(st.History)
	}
	return map[string]any{"node": m.node(), "steps": len(steps), "events": events}, nil
}

// Functions implements Backend.Functions.
func (m *MemoryBackend) Functions(ctx context.Context, pipeline string) ([]registry.StepState, error) {
	defer m.mu.Unlock()
	if err := m.enter(ctx); err != nil {
		return nil, err
	}
	steps := m.stepsLocked(pipeline)
	if pipeline != "" && len(steps) == 0 {
		return nil, Errorf(http.StatusNotFound, CodeNotFound, "no pipeline %q", pipeline)
	}
	return steps, nil
}

// History implements Backend.History.
func (m *MemoryBackend) History(ctx context.Context, pipeline, step string) (registry.StepState, error) {
	defer m.mu.Unlock()
	if err := m.enter(ctx); err != nil {
		return registry.StepState{}, err
	}
	if err := m.existsLocked(pipeline, step); err != nil {
		return registry.StepState{}, err
	}
	return m.mu.state.Step(pipeline, step), nil
}

// Deploy implements Backend.Deploy.
func (m *MemoryBackend) Deploy(ctx context.Context, req DeployRequest) (registry.Event, error) {
	defer m.mu.Unlock()
	if err := m.enter(ctx); err != nil {
		return registry.Event{}, err
	}
	if err := m.existsLocked(req.Pipeline, req.Step); err != nil {
		return registry.Event{}, err
	}
	name, version, err := m.inspect(req)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = Errorf(http.StatusUnprocessableEntity, CodeInvalidModule, "%w", err)
		}
		return registry.Event{}, e
	}
	if req.Expect != nil && !bytes.Equal(lines(req.Sample), lines(req.Expect)) {
		return registry.Event{}, Errorf(http.StatusUnprocessableEntity, CodeSmokeTestFailed, "the output for the sample is not the expected records")
	}
	action := registry.ActionDeploy
	if req.Shadow {
		action = registry.ActionShadow
	}
	return m.appendLocked(registry.Event{Pipeline: req.Pipeline, Step: req.Step, Action: action, Digest: registry.Digest(req.Module),
		Name: name, FunctionVersion: version, Size: len(req.Module), Note: req.Note, Config: req.Config}, req.Module)
}

// Rollback implements Backend.Rollback.
func (m *MemoryBackend) Rollback(ctx context.Context, pipeline, step string, target int, note string) (registry.Event, error) {
	return m.action(ctx, registry.Event{Pipeline: pipeline, Step: step, Action: registry.ActionRollback, Target: target, Note: note})
}

// Promote implements Backend.Promote.
func (m *MemoryBackend) Promote(ctx context.Context, pipeline, step, note string) (registry.Event, error) {
	return m.action(ctx, registry.Event{Pipeline: pipeline, Step: step, Action: registry.ActionPromote, Note: note})
}

// Discard implements Backend.Discard.
func (m *MemoryBackend) Discard(ctx context.Context, pipeline, step, note string) (registry.Event, error) {
	return m.action(ctx, registry.Event{Pipeline: pipeline, Step: step, Action: registry.ActionDiscard, Note: note})
}

func (m *MemoryBackend) action(ctx context.Context, ev registry.Event) (registry.Event, error) {
	defer m.mu.Unlock()
	if err := m.enter(ctx); err != nil {
		return registry.Event{}, err
	}
	if err := m.existsLocked(ev.Pipeline, ev.Step); err != nil {
		return registry.Event{}, err
	}
	return m.appendLocked(ev, nil)
}

// appendLocked writes the records of a module (if not nil) and an event and
// applies them, as a node writes to the registry topic and reads its event
// back.
func (m *MemoryBackend) appendLocked(ev registry.Event, module []byte) (registry.Event, error) {
	ev.Time = m.now()
	ev.Node = m.node()
	next, err := m.mu.state.Next(ev, module)
	if err != nil {
		return registry.Event{}, Errorf(http.StatusConflict, CodeConflict, "%w", err)
	}
	if module != nil {
		for _, rec := range registry.ModuleRecords(module, 0) {
			if _, err := m.mu.state.Apply(rec); err != nil {
				return registry.Event{}, fmt.Errorf("storing the module: %w", err)
			}
		}
	}
	// An event about an earlier module carries its name and version.
	st := m.mu.state.Step(ev.Pipeline, ev.Step)
	var from *registry.Event
	switch next.Action {
	case registry.ActionRollback:
		from = &st.History[next.Target-1]
	case registry.ActionPromote, registry.ActionDiscard:
		from = st.Shadow
	}
	if from != nil {
		next.Name, next.FunctionVersion, next.Size = from.Name, from.FunctionVersion, from.Size
	}
	rec, err := registry.EventRecord(&next)
	if err != nil {
		return registry.Event{}, err
	}
	applied, err := m.mu.state.Apply(rec)
	if err != nil {
		return registry.Event{}, err
	}
	if applied == nil {
		return registry.Event{}, Errorf(http.StatusConflict, CodeConflict, "%s/%s: version %d was taken", ev.Pipeline, ev.Step, next.Version)
	}
	return *applied, nil
}

func (m *MemoryBackend) existsLocked(pipeline, step string) error {
	if m.mu.steps != nil && !m.mu.steps[registry.StepKey{Pipeline: pipeline, Step: step}] {
		return Errorf(http.StatusNotFound, CodeNotFound, "no step %s/%s", pipeline, step)
	}
	return nil
}

// stepsLocked returns the steps of a pipeline, or of all if pipeline is "":
// the declared ones, or those with events if every step exists.
func (m *MemoryBackend) stepsLocked(pipeline string) []registry.StepState {
	if m.mu.steps == nil {
		return m.mu.state.Steps(pipeline)
	}
	var out []registry.StepState
	for k := range m.mu.steps {
		if pipeline == "" || k.Pipeline == pipeline {
			out = append(out, m.mu.state.Step(k.Pipeline, k.Step))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StepKey.String() < out[j].StepKey.String() })
	return out
}

func (m *MemoryBackend) inspect(req DeployRequest) (name, version string, err error) {
	if m.Inspect != nil {
		return m.Inspect(req)
	}
	if !bytes.HasPrefix(req.Module, []byte("\x00asm\x01\x00\x00\x00")) {
		return "", "", errors.New("not a WebAssembly module: no \\0asm header")
	}
	return "", "", nil
}

func (m *MemoryBackend) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now().UTC()
}

func (m *MemoryBackend) node() string {
	if m.Node != "" {
		return m.Node
	}
	return "memory"
}

// lines normalises JSON lines for comparison: no blank lines, no
// surrounding space.
func lines(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// State implements Backend: a MemoryBackend keeps no stores.
func (m *MemoryBackend) State(ctx context.Context, q StateQuery) (StateResult, error) {
	if err := m.enter(ctx); err != nil {
		return StateResult{}, err
	}
	return StateResult{}, Errorf(http.StatusNotFound, CodeNotFound, "no store %s/%s (a MemoryBackend keeps no state)", q.Pipeline, q.Store)
}
