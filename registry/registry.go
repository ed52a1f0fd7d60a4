// Package registry is Eddy's function registry: modules stored by their
// sha256 digest, and per (pipeline, step) a numbered history of events —
// deploys, rollbacks, shadow deploys, promotions, discards — each with its
// time, node and note. Per pipeline it also keeps a numbered history of
// resets (eddy reset): pipeline-level events, with no step, that tell the
// pipeline's nodes to stop while a reset runs and to drop the state they
// kept from before it.
//
// The registry lives in a compacted Kafka topic with one partition (the
// host reads and writes it; this package has no Kafka dependency), so every
// node of every pipeline sees every event in the same order. A module is
// written as chunks (the broker limits message sizes), then the event that
// uses it. Every record has a unique key, so compaction removes nothing and
// a node that reads the topic from the start rebuilds the same [State] by
// [State.Apply]-ing its records in order.
//
// Two nodes may write an event with the same version number at once; the
// first in the log wins and the other is ignored by every reader, so a
// writer learns whether its event took effect by reading it back.
package registry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTopic is the registry topic's default name.
const DefaultTopic = "eddy-registry"

// DefaultChunkSize is the largest module chunk written in one record: well
// under Kafka's default message limit of 1 MiB.
const DefaultChunkSize = 512 << 10

// Action is what an event does.
type Action string

// Actions.
const (
	// ActionDeploy makes a module the step's live version.
	ActionDeploy Action = "deploy"
	// ActionRollback makes an earlier version's module live again.
	ActionRollback Action = "rollback"
	// ActionShadow runs a module beside the live one, writing to the
	// shadow output.
	ActionShadow Action = "shadow"
	// ActionPromote makes the shadow module live.
	ActionPromote Action = "promote"
	// ActionDiscard drops the shadow.
	ActionDiscard Action = "discard"
	// ActionReset begins a reset of a whole pipeline (a pipeline-level
	// event: Step is ""). Until the reset is done, the pipeline's nodes
	// stop and new ones wait before they process anything. A reset begun
	// while another is pending supersedes it.
	ActionReset Action = "reset"
	// ActionResetDone ends the pending reset, whose version is Target:
	// nodes that start afterwards wipe the state they kept from before it.
	ActionResetDone Action = "reset_done"
)

// IsReset reports whether an action is a pipeline-level reset action.
func IsReset(a Action) bool { return a == ActionReset || a == ActionResetDone }

// Event is one entry of a step's history.
type Event struct {
	Pipeline string `json:"pipeline"`
	Step     string `json:"step"`
	// Version numbers a step's events 1, 2, 3, ...; the live version of a
	// step is the number of the event that made its module live. Version
	// 0 is the module named in the pipeline file, before any event.
	Version int    `json:"version"`
	Action  Action `json:"action"`
	// Digest is the hex sha256 of the module the event is about: the new
	// live or shadow module ("" for a discard).
	Digest string `json:"digest,omitempty"`
	// Target is the version a rollback returns to, or the reset a
	// reset_done ends.
	Target int `json:"target,omitempty"`
	// To is where a reset moves the pipeline's input: "earliest", or an
	// RFC 3339 time (the first records at or after it).
	To string `json:"to,omitempty"`
	// Name and FunctionVersion are the module's manifest name and version.
	Name            string    `json:"name,omitempty"`
	FunctionVersion string    `json:"function_version,omitempty"`
	Size            int       `json:"size,omitempty"`
	Note            string    `json:"note,omitempty"`
	Time            time.Time `json:"time"`
	Node            string    `json:"node,omitempty"`
	// ID makes the event's record key unique.
	ID string `json:"id"`
}

// Digest returns the hex sha256 of a module.
func Digest(module []byte) string {
	sum := sha256.Sum256(module)
	return hex.EncodeToString(sum[:])
}

// Short is the first 12 hex digits of a digest, for display.
func Short(digest string) string { return digest[:min(12, len(digest))] }

// Record is a registry topic record.
type Record struct {
	Key, Value []byte
}

// ModuleRecords encodes a module as chunk records of at most chunkSize
// bytes (DefaultChunkSize if 0).
func ModuleRecords(module []byte, chunkSize int) []Record {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	d := Digest(module)
	n := max(1, (len(module)+chunkSize-1)/chunkSize)
	recs := make([]Record, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := i*chunkSize, min(len(module), (i+1)*chunkSize)
		key := fmt.Sprintf("m/%s/%d/%d", d, i, n)
		recs = append(recs, Record{Key: []byte(key), Value: module[lo:hi]})
	}
	return recs
}

// EventRecord encodes an event, giving it a unique ID if it has none.
func EventRecord(ev *Event) (Record, error) {
	if ev.ID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return Record{}, err
		}
		ev.ID = hex.EncodeToString(b[:])
	}
	v, err := json.Marshal(ev)
	if err != nil {
		return Record{}, err
	}
	return Record{Key: []byte(fmt.Sprintf("e/%s/%s/%d/%s", ev.Pipeline, ev.Step, ev.Version, ev.ID)), Value: v}, nil
}

// StepKey names a pipeline's step.
type StepKey struct{ Pipeline, Step string }

func (k StepKey) String() string { return k.Pipeline + "/" + k.Step }

// StepState is a step's registry state.
type StepState struct {
	StepKey
	History []Event
	// Live is the event whose module is live (nil: the pipeline file's).
	Live *Event
	// Shadow is the event whose module runs as the shadow (nil: none).
	Shadow *Event
}

// ResetState is a pipeline's history of resets, numbered 1, 2, 3, ... as a
// step's history is (the two are separate).
type ResetState struct {
	Pipeline string
	History  []Event
	// Pending is the reset begun and not yet done (nil: none): the
	// pipeline's nodes must not process while it is set.
	Pending *Event
	// Epoch is the version of the last reset_done event (0: no reset
	// finished): a node's state from before it is stale.
	Epoch int
}

// State is the registry rebuilt from its records. It is not safe for
// concurrent use.
type State struct {
	modules map[string][]byte
	chunks  map[string]*partial
	steps   map[StepKey]*StepState
	resets  map[string]*ResetState
}

type partial struct {
	parts [][]byte
	have  int
}

// NewState returns an empty registry.
func NewState() *State {
	return &State{modules: map[string][]byte{}, chunks: map[string]*partial{}, steps: map[StepKey]*StepState{},
		resets: map[string]*ResetState{}}
}

// ErrMalformed is wrapped by Apply's errors: a record that is not the
// registry's. Readers log and skip such records.
var ErrMalformed = errors.New("malformed registry record")

// Apply applies a record read from the registry topic. It returns the event
// when the record was an event that took effect, nil otherwise (a chunk, or
// an event that lost a race for its version number, or one about a module
// the registry does not have).
func (s *State) Apply(r Record) (*Event, error) {
	key := string(r.Key)
	switch {
	case strings.HasPrefix(key, "m/"):
		return nil, s.applyChunk(key, r.Value)
	case strings.HasPrefix(key, "e/"):
		var ev Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, key, err)
		}
		return s.applyEvent(ev)
	}
	return nil, fmt.Errorf("%w: key %q", ErrMalformed, key)
}

func (s *State) applyChunk(key string, v []byte) error {
	f := strings.Split(key, "/")
	if len(f) != 4 {
		return fmt.Errorf("%w: key %q", ErrMalformed, key)
	}
	d := f[1]
	i, err1 := strconv.Atoi(f[2])
	n, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n || n > 1<<16 {
		return fmt.Errorf("%w: key %q", ErrMalformed, key)
	}
	if _, ok := s.modules[d]; ok {
		return nil
	}
	p := s.chunks[d]
	if p == nil || len(p.parts) != n {
		p = &partial{parts: make([][]byte, n)}
		s.chunks[d] = p
	}
	if p.parts[i] == nil {
		p.have++
	}
	p.parts[i] = append([]byte{}, v...)
	if p.have < n {
		return nil
	}
	delete(s.chunks, d)
	var m []byte
	for _, c := range p.parts {
		m = append(m, c...)
	}
	if Digest(m) != d {
		return fmt.Errorf("%w: module %s: its chunks do not match the digest", ErrMalformed, Short(d))
	}
	s.modules[d] = m
	return nil
}

func (s *State) applyEvent(ev Event) (*Event, error) {
	if IsReset(ev.Action) {
		return s.applyReset(ev), nil
	}
	k := StepKey{ev.Pipeline, ev.Step}
	st := s.steps[k]
	if st == nil {
		st = &StepState{StepKey: k}
	}
	if ev.Version != len(st.History)+1 {
		return nil, nil // lost the race for its number
	}
	if s.check(st, &ev) != nil {
		// Writers check with Next first; an event that cannot apply (its
		// module never arrived) is skipped by every reader alike.
		return nil, nil
	}
	s.steps[k] = st
	st.History = append(st.History, ev)
	e := &st.History[len(st.History)-1]
	switch ev.Action {
	case ActionDeploy, ActionRollback:
		st.Live = e
	case ActionShadow:
		st.Shadow = e
	case ActionPromote:
		st.Live, st.Shadow = e, nil
	case ActionDiscard:
		st.Shadow = nil
	}
	return e, nil
}

// check reports whether ev can follow st's history.
func (s *State) check(st *StepState, ev *Event) error {
	need := func() error {
		if _, ok := s.modules[ev.Digest]; !ok {
			return fmt.Errorf("module %s is not in the registry", Short(ev.Digest))
		}
		return nil
	}
	switch ev.Action {
	case ActionDeploy, ActionShadow:
		return need()
	case ActionRollback:
		if ev.Target < 1 || ev.Target > len(st.History) {
			return fmt.Errorf("no version %d to roll back to", ev.Target)
		}
		if t := st.History[ev.Target-1]; t.Digest != ev.Digest || t.Action == ActionDiscard {
			return fmt.Errorf("version %d did not deploy module %s", ev.Target, Short(ev.Digest))
		}
		return need()
	case ActionPromote:
		if st.Shadow == nil || st.Shadow.Digest != ev.Digest {
			return errors.New("no such shadow to promote")
		}
		return nil
	case ActionDiscard:
		if st.Shadow == nil {
			return errors.New("no shadow to discard")
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", ev.Action)
}

// applyReset applies a reset event; it returns it as it took effect, or nil
// (it lost the race for its number, or cannot follow the history).
func (s *State) applyReset(ev Event) *Event {
	rs := s.resets[ev.Pipeline]
	if rs == nil {
		rs = &ResetState{Pipeline: ev.Pipeline}
	}
	if ev.Version != len(rs.History)+1 || checkReset(rs, &ev) != nil {
		return nil
	}
	s.resets[ev.Pipeline] = rs
	rs.History = append(rs.History, ev)
	e := &rs.History[len(rs.History)-1]
	switch ev.Action {
	case ActionReset:
		rs.Pending = e
	case ActionResetDone:
		rs.Pending, rs.Epoch = nil, e.Version
	}
	return e
}

// checkReset reports whether ev can follow a pipeline's reset history.
func checkReset(rs *ResetState, ev *Event) error {
	if ev.Step != "" {
		return fmt.Errorf("%s: a reset is about a whole pipeline, not step %q", ev.Pipeline, ev.Step)
	}
	if ev.Action == ActionResetDone && (rs.Pending == nil || rs.Pending.Version != ev.Target) {
		return fmt.Errorf("%s: reset %d is not the pending reset", ev.Pipeline, ev.Target)
	}
	return nil
}

func (s *State) nextReset(ev Event) (Event, error) {
	rs := s.resets[ev.Pipeline]
	if rs == nil {
		rs = &ResetState{Pipeline: ev.Pipeline}
	}
	ev.Version = len(rs.History) + 1
	if ev.Action == ActionResetDone && ev.Target == 0 && rs.Pending != nil {
		ev.Target = rs.Pending.Version
	}
	if err := checkReset(rs, &ev); err != nil {
		return ev, err
	}
	return ev, nil
}

// Resets returns a pipeline's reset history (a copy).
func (s *State) Resets(pipeline string) ResetState {
	rs := s.resets[pipeline]
	if rs == nil {
		return ResetState{Pipeline: pipeline}
	}
	c := ResetState{Pipeline: pipeline, History: append([]Event(nil), rs.History...), Epoch: rs.Epoch}
	if rs.Pending != nil {
		c.Pending = &c.History[rs.Pending.Version-1]
	}
	return c
}

// Next prepares the event that would follow a step's history: its version
// number, and for a rollback, promote or discard the digest it is about.
// It reports why the event cannot follow (a missing module, nothing to roll
// back to, no shadow). module, if not nil, is the module a deploy or shadow
// event will write before itself: it counts as present.
//
// For a reset action it prepares the event that would follow the
// pipeline's reset history instead: a reset_done without a Target ends the
// pending reset.
func (s *State) Next(ev Event, module []byte) (Event, error) {
	if IsReset(ev.Action) {
		return s.nextReset(ev)
	}
	k := StepKey{ev.Pipeline, ev.Step}
	st := s.steps[k]
	if st == nil {
		st = &StepState{StepKey: k}
	}
	ev.Version = len(st.History) + 1
	switch ev.Action {
	case ActionRollback:
		if ev.Target == 0 {
			// The version that was live before the current one.
			ev.Target = previousLive(st)
			if ev.Target == 0 {
				return ev, fmt.Errorf("%s: no earlier version to roll back to", k)
			}
		}
		if ev.Target >= 1 && ev.Target <= len(st.History) {
			ev.Digest = st.History[ev.Target-1].Digest
		}
	case ActionPromote, ActionDiscard:
		if st.Shadow == nil {
			return ev, fmt.Errorf("%s: no shadow deploy", k)
		}
		ev.Digest = st.Shadow.Digest
	}
	if module != nil && Digest(module) == ev.Digest {
		if _, ok := s.modules[ev.Digest]; !ok {
			s.modules[ev.Digest] = module
			defer delete(s.modules, ev.Digest)
		}
	}
	if err := s.check(st, &ev); err != nil {
		return ev, fmt.Errorf("%s: %w", k, err)
	}
	return ev, nil
}

// previousLive returns the version live before the current live one, in
// history order, skipping versions with the current module.
func previousLive(st *StepState) int {
	if st.Live == nil {
		return 0
	}
	for i := len(st.History) - 1; i >= 0; i-- {
		e := st.History[i]
		if e.Version >= st.Live.Version || e.Digest == st.Live.Digest {
			continue
		}
		switch e.Action {
		case ActionDeploy, ActionRollback, ActionPromote:
			return e.Version
		}
	}
	return 0
}

// Module returns a module by digest.
func (s *State) Module(digest string) ([]byte, bool) {
	m, ok := s.modules[digest]
	return m, ok
}

// Step returns a step's state (a copy).
func (s *State) Step(pipeline, step string) StepState {
	st := s.steps[StepKey{pipeline, step}]
	if st == nil {
		return StepState{StepKey: StepKey{pipeline, step}}
	}
	c := *st
	c.History = append([]Event(nil), st.History...)
	return c
}

// Steps returns every step with events, sorted, optionally of one pipeline.
func (s *State) Steps(pipeline string) []StepState {
	var out []StepState
	for k := range s.steps {
		if pipeline == "" || k.Pipeline == pipeline {
			out = append(out, s.Step(k.Pipeline, k.Step))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StepKey.String() < out[j].StepKey.String() })
	return out
}
