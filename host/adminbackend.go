package host

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/registry"
)

// Admin returns the node's admin.Backend: what its admin HTTP API serves.
func (n *Node) Admin() admin.Backend { return nodeAdmin{n} }

type nodeAdmin struct{ n *Node }

// NodeStatus is what GET /v1/status answers.
type NodeStatus struct {
	Node       string             `json:"node"`
	Pipeline   string             `json:"pipeline"`
	Delivery   Delivery           `json:"delivery"`
	Started    time.Time          `json:"started"`
	Partitions map[string][]int32 `json:"partitions"`
	Steps      []StepStatus       `json:"steps"`
	Stats      Stats              `json:"stats"`
	// Lag is the records of the node's input partitions not processed yet
	// (the sum of its tasks' input lags).
	Lag   int64        `json:"lag"`
	Tasks []TaskStatus `json:"tasks"`
	Graph Graph        `json:"graph"`
	// StateRebuilds are the node's last stores (at most 16) wiped and
	// rebuilt from their changelog because their checkpoint did not match
	// it, oldest first.
	StateRebuilds []StoreRebuild `json:"state_rebuilds,omitempty"`
	// Restores are the node's stores being restored now (from their
	// changelog or a table's topic); the node's other partitions go on
	// meanwhile.
	Restores []RestoreStatus `json:"restores,omitempty"`
	// Standbys are the node's standby copies of other nodes' stores
	// (standby_replicas), store by store, with their lag.
	Standbys []StandbyStatus `json:"standbys,omitempty"`
	// SchemaRegistry is the state of the registry the source's writers'
	// schemas come from (a registry format only).
	SchemaRegistry *RegistryStatus `json:"schema_registry,omitempty"`
}

// StepStatus is a step's live function in a node.
type StepStatus struct {
	Name    string   `json:"name"`
	Kind    StepKind `json:"kind"`
	Version int      `json:"version"`
	Digest  string   `json:"digest,omitempty"`
	Staged  int      `json:"staged,omitempty"` // a version waiting for the next transaction boundary
	Shadow  int      `json:"shadow,omitempty"` // the version running as the shadow
	// Config is the step's config as the pipeline file gives it: values,
	// and for secrets where they come from, never their values.
	Config map[string]string `json:"config,omitempty"`
}

// Status returns the node's status.
func (n *Node) Status() NodeStatus {
	st := NodeStatus{Node: n.cfg.NodeID, Pipeline: n.p.Name, Delivery: n.p.Delivery, Started: n.started,
		Partitions: map[string][]int32{}, Stats: n.Stats(), Tasks: n.taskStatuses(), Graph: n.graph(),
		StateRebuilds: n.rebuilds.list(), Restores: n.metrics.restoresNow(), Standbys: n.standbyStatus(), SchemaRegistry: n.formats.status()}
	for _, t := range st.Tasks {
		for _, in := range t.Inputs {
			st.Lag += in.Lag
		}
	}
	n.mu.Lock()
	for topic, ps := range n.mu.tasks {
		for p := range ps {
			st.Partitions[topic] = append(st.Partitions[topic], p)
		}
		sort.Slice(st.Partitions[topic], func(i, j int) bool { return st.Partitions[topic][i] < st.Partitions[topic][j] })
	}
	n.mu.Unlock()
	n.fnMu.Lock()
	for i, s := range n.p.Steps {
		ss := StepStatus{Name: s.Name, Kind: s.Kind}
		cfg := s.Config
		if lf := n.cur[i]; lf != nil {
			ss.Version, ss.Digest = lf.version, lf.fn.Digest()
			cfg = lf.cfg.entries // the live version's (a deploy's, or the file's)
		}
		for name, c := range cfg {
			if ss.Config == nil {
				ss.Config = map[string]string{}
			}
			ss.Config[name] = c.String()
		}
		if lf := n.staged[i]; lf != nil {
			ss.Staged = lf.version
		}
		if lf := n.shadowCur[i]; lf != nil {
			ss.Shadow = lf.version
		}
		st.Steps = append(st.Steps, ss)
	}
	n.fnMu.Unlock()
	return st
}

func (a nodeAdmin) ready(ctx context.Context) error {
	select {
	case <-a.n.regReady:
		return nil
	case <-ctx.Done():
		return admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable, "the node is starting")
	}
}

func (a nodeAdmin) Health(ctx context.Context) error {
	select {
	case <-a.n.regReady:
	default:
		return admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable, "the node is starting")
	}
	select {
	case <-a.n.stopped:
		return admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable, "the node has stopped")
	default:
		return nil
	}
}

func (a nodeAdmin) Status(ctx context.Context) (any, error) {
	a.n.refreshEnds(ctx)
	return a.n.Status(), nil
}

func (a nodeAdmin) Functions(ctx context.Context, pipeline string) ([]registry.StepState, error) {
	if err := a.ready(ctx); err != nil {
		return nil, err
	}
	var out []registry.StepState
	a.n.reg.view(func(st *registry.State) {
		out = st.Steps(pipeline)
		if pipeline != "" && pipeline != a.n.p.Name {
			return
		}
		// The node's own steps appear even before their first deploy.
		have := map[string]bool{}
		for _, s := range out {
			if s.Pipeline == a.n.p.Name {
				have[s.Step] = true
			}
		}
		for _, s := range a.n.p.Steps {
			if !have[s.Name] {
				out = append(out, st.Step(a.n.p.Name, s.Name))
			}
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].StepKey.String() < out[j].StepKey.String() })
	return out, nil
}

func (a nodeAdmin) History(ctx context.Context, pipeline, step string) (registry.StepState, error) {
	if err := a.ready(ctx); err != nil {
		return registry.StepState{}, err
	}
	var st registry.StepState
	a.n.reg.view(func(s *registry.State) { st = s.Step(pipeline, step) })
	if len(st.History) == 0 && (pipeline != a.n.p.Name || a.n.stepIndex(step) < 0) {
		return st, admin.Errorf(http.StatusNotFound, admin.CodeNotFound, "no step %s/%s", pipeline, step)
	}
	return st, nil
}

func (a nodeAdmin) own(pipeline string) error {
	if pipeline != a.n.p.Name {
		return admin.Errorf(http.StatusNotFound, admin.CodeNotFound,
			"this node runs pipeline %s, not %s: ask a node of %s", a.n.p.Name, pipeline, pipeline)
	}
	return nil
}

func (a nodeAdmin) Deploy(ctx context.Context, req admin.DeployRequest) (registry.Event, error) {
	if err := a.own(req.Pipeline); err != nil {
		return registry.Event{}, err
	}
	ev, err := a.n.Deploy(ctx, Deployment{Step: req.Step, Module: req.Module, Note: req.Note, Shadow: req.Shadow,
		Sample: req.Sample, Expect: req.Expect, Config: req.Config})
	return ev, adminError(err)
}

func (a nodeAdmin) Rollback(ctx context.Context, pipeline, step string, target int, note string) (registry.Event, error) {
	if err := a.own(pipeline); err != nil {
		return registry.Event{}, err
	}
	ev, err := a.n.Rollback(ctx, step, target, note)
	return ev, adminError(err)
}

func (a nodeAdmin) Promote(ctx context.Context, pipeline, step, note string) (registry.Event, error) {
	if err := a.own(pipeline); err != nil {
		return registry.Event{}, err
	}
	ev, err := a.n.Promote(ctx, step, note)
	return ev, adminError(err)
}

func (a nodeAdmin) Discard(ctx context.Context, pipeline, step, note string) (registry.Event, error) {
	if err := a.own(pipeline); err != nil {
		return registry.Event{}, err
	}
	ev, err := a.n.Discard(ctx, step, note)
	return ev, adminError(err)
}

// adminError maps a DeployError to the API's status and code.
func adminError(err error) error {
	var de *DeployError
	if !errors.As(err, &de) {
		return err
	}
	status := map[string]int{"not_found": http.StatusNotFound, "conflict": http.StatusConflict,
		"invalid_module": http.StatusUnprocessableEntity, "incompatible_module": http.StatusUnprocessableEntity,
		"invalid_config": http.StatusUnprocessableEntity, "smoke_test_failed": http.StatusUnprocessableEntity}[de.Code]
	if status == 0 {
		status = http.StatusBadRequest
	}
	return admin.Errorf(status, de.Code, "%s", de.Reason)
}

// ClusterStatus is what GET /v1/cluster answers: the status of every node
// of the pipeline's group that advertises an admin API.
type ClusterStatus struct {
	Pipeline string       `json:"pipeline"`
	Nodes    []NodeStatus `json:"nodes"`
	// Unreachable are members whose admin API did not answer.
	Unreachable []PeerError `json:"unreachable,omitempty"`
}

// PeerError is a member of the group that could not be asked.
type PeerError struct {
	Admin string `json:"admin"`
	Error string `json:"error"`
}

// Cluster asks every other member of the group for its status, in
// parallel, each within a few seconds.
func (a nodeAdmin) Cluster(ctx context.Context) (any, error) {
	n := a.n
	n.refreshEnds(ctx)
	cs := ClusterStatus{Pipeline: n.p.Name, Nodes: []NodeStatus{n.Status()}}
	peers, refused, err := n.groupAdmins(ctx)
	cs.Unreachable = append(cs.Unreachable, refused...)
	if err != nil {
		// Not in the group yet (or the broker is away): this node alone.
		cs.Unreachable = append(cs.Unreachable, PeerError{Admin: "(group)", Error: err.Error()})
		return cs, nil
	}
	type answer struct {
		st  NodeStatus
		err error
	}
	answers := make([]answer, len(peers))
	var wg sync.WaitGroup
	for i, url := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			raw, err := n.peer(url).Status(pctx)
			if err == nil {
				err = json.Unmarshal(raw.(json.RawMessage), &answers[i].st)
			}
			answers[i].err = err
		}()
	}
	wg.Wait()
	for i, ans := range answers {
		if ans.err != nil {
			cs.Unreachable = append(cs.Unreachable, PeerError{Admin: peers[i], Error: ans.err.Error()})
			continue
		}
		cs.Nodes = append(cs.Nodes, ans.st)
	}
	sort.Slice(cs.Nodes, func(i, j int) bool { return cs.Nodes[i].Node < cs.Nodes[j].Node })
	return cs, nil
}
