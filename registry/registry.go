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
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// Limits of what the registry decodes from its topic (which any client
// allowed to write it can fill) and from a node's local copy. A record over
// them is skipped (Apply returns an error wrapping ErrMalformed), as every
// reader skips it alike.
const (
	// MaxModuleSize bounds a module: its chunks' bytes together.
	MaxModuleSize = 128 << 20
	// MaxChunks bounds the chunk count of a module's keys (128 MiB in
	// chunks of 32 KiB; nodes write chunks of DefaultChunkSize).
	MaxChunks = 4096
	// MaxPendingBytes bounds the bytes held for modules that are not
	// complete yet or that no event uses yet; past it the oldest such
	// module is dropped (an event naming it later is skipped).
	MaxPendingBytes = 256 << 20
	// MaxPendingModules bounds the number of such modules likewise.
	MaxPendingModules = 256
	// MaxEventSize bounds an event record's value.
	MaxEventSize = 64 << 10
	// MaxNoteSize bounds an event's note; writers refuse a longer one.
	MaxNoteSize = 4 << 10
	// MaxUnverifiedBytes bounds the events a State keeps of pipelines it
	// does not Require (other pipelines', or all of them when unsigned),
	// by their records' sizes; past it, such events are refused.
	MaxUnverifiedBytes = 64 << 20
)

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
	// Config, on a deploy or a shadow, is the config the version runs
	// with, replacing the step's: values, and where each node reads a
	// secret from (an environment variable, a file), never a secret's
	// value. An event without it carries on the config of the live
	// version (the pipeline file's when none carried any); a rollback
	// takes its target's, a promotion its shadow's. Readers fill it in so
	// on every event of a step's history (State.applyEvent).
	Config map[string]ConfigEntry `json:"config,omitempty"`
	// ID makes the event's record key unique.
	ID string `json:"id"`
	// Sig is the event's signature (see [Sign]), "" if unsigned.
	Sig string `json:"sig,omitempty"`
}

// ConfigEntry is one entry of a version's config: a value, or the
// environment variable or file (on the nodes, relative to the pipeline
// file's directory) a secret is read from. At most one is set, or none for
// an empty value.
type ConfigEntry struct {
	Value string `json:"value,omitempty"`
	Env   string `json:"env,omitempty"`
	File  string `json:"file,omitempty"`
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
	// unused are complete modules no event has used yet; with chunks they
	// are the pending modules, bounded by MaxPendingBytes and
	// MaxPendingModules. order has their digests, oldest first (and
	// digests since completed and used, skipped when met).
	unused  map[string]bool
	order   []string
	pending int64
	// keys are the pipelines whose step events must be signed, with the
	// key (nil: none can be verified, every one is refused). See Require.
	keys map[string][]byte
	// unverified is the size of the events kept of pipelines not Required.
	unverified int64
}

// partial is a module whose chunks are arriving: parts are allocated as
// they come, never from the count a key claims.
type partial struct {
	n     int
	parts map[int][]byte
	size  int
}

// NewState returns an empty registry.
func NewState() *State {
	return &State{modules: map[string][]byte{}, chunks: map[string]*partial{}, steps: map[StepKey]*StepState{},
		resets: map[string]*ResetState{}, unused: map[string]bool{}, keys: map[string][]byte{}}
}

// Require makes the pipeline's events take effect only if signed with key
// (see [Sign]); others are refused with an error wrapping ErrUnverified.
// With a nil key every step event (deploy, rollback, shadow, promote,
// discard) is refused, and reset events are taken unverified: a reader
// without a key cannot verify them, and refusing them would keep it from
// ever being reset. Call it before applying records. A pipeline not
// Required takes events as they come.
func (s *State) Require(pipeline string, key []byte) { s.keys[pipeline] = key }

// ErrMalformed is wrapped by Apply's errors: a record that is not the
// registry's. Readers log and skip such records.
var ErrMalformed = errors.New("malformed registry record")

// ErrUnverified is wrapped by Apply's errors for an event of a Required
// pipeline without a valid signature. It wraps ErrMalformed: readers skip
// it likewise.
var ErrUnverified = fmt.Errorf("%w: unsigned or mis-signed event", ErrMalformed)

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
		if len(r.Value) > MaxEventSize {
			return nil, fmt.Errorf("%w: %.80s: event of %d bytes, over %d", ErrMalformed, key, len(r.Value), MaxEventSize)
		}
		var ev Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			return nil, fmt.Errorf("%w: %.80s: %w", ErrMalformed, key, err)
		}
		_, verified := s.keys[ev.Pipeline]
		if !verified && s.unverified+int64(len(r.Value)) > MaxUnverifiedBytes {
			return nil, fmt.Errorf("%w: %.80s: over the %d bytes of unverified events kept", ErrMalformed, key, MaxUnverifiedBytes)
		}
		got, err := s.applyEvent(ev)
		if got != nil && !verified {
			s.unverified += int64(len(r.Value))
		}
		return got, err
	}
	return nil, fmt.Errorf("%w: key %.80q", ErrMalformed, key)
}

// isDigest reports whether d is a hex sha256, as Digest writes it.
func isDigest(d string) bool {
	if len(d) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(d) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (s *State) applyChunk(key string, v []byte) error {
	f := strings.Split(key, "/")
	if len(f) != 4 || !isDigest(f[1]) {
		return fmt.Errorf("%w: key %.80q", ErrMalformed, key)
	}
	d := f[1]
	i, err1 := strconv.Atoi(f[2])
	n, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n || n > MaxChunks {
		return fmt.Errorf("%w: key %.80q (at most %d chunks)", ErrMalformed, key, MaxChunks)
	}
	if _, ok := s.modules[d]; ok {
		return nil
	}
	p := s.chunks[d]
	if p != nil && p.n != n {
		s.dropPending(d)
		p = nil
	}
	if p == nil {
		p = &partial{n: n, parts: map[int][]byte{}}
		s.chunks[d] = p
		s.order = append(s.order, d)
	}
	if old, ok := p.parts[i]; ok {
		p.size -= len(old)
		s.pending -= int64(len(old))
	}
	if p.size+len(v) > MaxModuleSize {
		s.dropPending(d)
		return fmt.Errorf("%w: module %s: over %d bytes", ErrMalformed, Short(d), MaxModuleSize)
	}
	p.parts[i] = bytes.Clone(v)
	p.size += len(v)
	s.pending += int64(len(v))
	defer s.trimPending()
	if len(p.parts) < n {
		return nil
	}
	delete(s.chunks, d)
	m := make([]byte, 0, p.size)
	for j := range n {
		m = append(m, p.parts[j]...)
	}
	if Digest(m) != d {
		s.pending -= int64(p.size)
		return fmt.Errorf("%w: module %s: its chunks do not match the digest", ErrMalformed, Short(d))
	}
	s.modules[d] = m
	s.unused[d] = true
	return nil
}

// dropPending forgets a pending module (partial or unused).
func (s *State) dropPending(d string) {
	if p, ok := s.chunks[d]; ok {
		s.pending -= int64(p.size)
		delete(s.chunks, d)
	}
	if s.unused[d] {
		s.pending -= int64(len(s.modules[d]))
		delete(s.unused, d)
		delete(s.modules, d)
	}
}

// trimPending drops the oldest pending modules while over the limits.
func (s *State) trimPending() {
	for len(s.order) > 0 && (s.pending > MaxPendingBytes || len(s.chunks)+len(s.unused) > MaxPendingModules) {
		d := s.order[0]
		s.order = s.order[1:]
		s.dropPending(d)
	}
	if len(s.order) > 2*MaxPendingModules {
		// Compact: keep the digests still pending.
		keep := s.order[:0]
		for _, d := range s.order {
			if _, ok := s.chunks[d]; ok || s.unused[d] {
				keep = append(keep, d)
			}
		}
		s.order = slices.Clip(keep)
	}
}

// use marks a module as used by an event: it stays.
func (s *State) use(d string) {
	if s.unused[d] {
		delete(s.unused, d)
		s.pending -= int64(len(s.modules[d]))
	}
}

func (s *State) applyEvent(ev Event) (*Event, error) {
	if IsReset(ev.Action) {
		if key := s.keys[ev.Pipeline]; key != nil && !Verify(ev, key) {
			return nil, fmt.Errorf("%w: %s reset version %d (%s, node %q): unsigned or mis-signed", ErrUnverified, ev.Pipeline,
				ev.Version, ev.Action, ev.Node)
		}
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
	if key, ok := s.keys[ev.Pipeline]; ok && !Verify(ev, key) {
		why := "bad signature"
		switch {
		case key == nil:
			why = "this reader has no key to verify it with"
		case ev.Sig == "":
			why = "unsigned"
		}
		return nil, fmt.Errorf("%w: %s/%s version %d (%s, module %s, node %q): %s", ErrUnverified, ev.Pipeline, ev.Step,
			ev.Version, ev.Action, Short(ev.Digest), ev.Node, why)
	}
	if s.check(st, &ev) != nil {
		// Writers check with Next first; an event that cannot apply (its
		// module never arrived) is skipped by every reader alike.
		return nil, nil
	}
	s.steps[k] = st
	s.use(ev.Digest)
	// The config the version runs with (Event.Config).
	switch ev.Action {
	case ActionDeploy, ActionShadow:
		if ev.Config == nil && st.Live != nil {
			ev.Config = st.Live.Config
		}
	case ActionRollback:
		ev.Config = st.History[ev.Target-1].Config
	case ActionPromote:
		ev.Config = st.Shadow.Config
	default:
		ev.Config = nil
	}
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
	if ev.Config != nil && ev.Action != ActionDeploy && ev.Action != ActionShadow {
		return fmt.Errorf("a %s carries no config", ev.Action)
	}
	if err := checkConfig(ev.Config); err != nil {
		return err
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

// Key derives the key that signs a pipeline's registry events from its
// admin token ("" has no key: nil).
func Key(token string) []byte {
	if token == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("eddy registry key v1"))
	return m.Sum(nil)
}

// signature is the HMAC of an event's fields but Sig, each length-prefixed.
func signature(ev Event, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	var n [8]byte
	for _, f := range []string{"eddy-registry-event-v1", ev.Pipeline, ev.Step, strconv.Itoa(ev.Version), string(ev.Action),
		ev.Digest, strconv.Itoa(ev.Target), ev.To, ev.Name, ev.FunctionVersion, strconv.Itoa(ev.Size), ev.Note,
		ev.Time.UTC().Format(time.RFC3339Nano), ev.Node, ev.ID} {
		m.Write(strconv.AppendInt(n[:0], int64(len(f)), 10))
		m.Write([]byte{':'})
		m.Write([]byte(f))
	}
	if ev.Config != nil {
		// Only events with config sign it: the signatures of earlier
		// events stay valid.
		m.Write([]byte("config"))
		for _, name := range slices.Sorted(maps.Keys(ev.Config)) {
			c := ev.Config[name]
			for _, f := range []string{name, c.Value, c.Env, c.File} {
				m.Write(strconv.AppendInt(n[:0], int64(len(f)), 10))
				m.Write([]byte{':'})
				m.Write([]byte(f))
			}
		}
	}
	return m.Sum(nil)
}

// Sign signs an event with key (see [Key]), giving it an ID first if it has
// none, so that [EventRecord] keeps the signed ID.
func Sign(ev *Event, key []byte) error {
	if ev.ID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		ev.ID = hex.EncodeToString(b[:])
	}
	ev.Sig = hex.EncodeToString(signature(*ev, key))
	return nil
}

// Verify reports whether ev carries a valid signature by key.
func Verify(ev Event, key []byte) bool {
	sig, err := hex.DecodeString(ev.Sig)
	return key != nil && err == nil && hmac.Equal(sig, signature(ev, key))
}

// AppendLocal appends a record in the form of a node's local copy of the
// registry: the key's length (uvarint), the key, the value.
func AppendLocal(dst []byte, r Record) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r.Key)))
	return append(append(dst, r.Key...), r.Value...)
}

// DecodeLocal decodes what AppendLocal wrote; the record aliases v.
func DecodeLocal(v []byte) (Record, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return Record{}, fmt.Errorf("%w: local copy entry of %d bytes", ErrMalformed, len(v))
	}
	return Record{Key: v[w : w+int(n)], Value: v[w+int(n):]}, nil
}

// The bounds of an event's config: those of a pipeline file's
// (abi.MaxConfigEntries, MaxConfigName, MaxConfigValue; the registry's
// tests check they agree; the registry does not import the ABI, which the
// admin API's clients must not depend on), and of a secret's file path.
const (
	maxConfigEntries = 256
	maxConfigName    = 256
	maxConfigValue   = 64 << 10
	maxConfigPath    = 4096
)

// checkConfig bounds an event's config as a pipeline file's is bounded and
// refuses an entry that is more than one of a value and a secret.
func checkConfig(cfg map[string]ConfigEntry) error {
	if len(cfg) > maxConfigEntries {
		return fmt.Errorf("config: at most %d entries, got %d", maxConfigEntries, len(cfg))
	}
	for name, c := range cfg {
		set := 0
		for _, f := range []string{c.Value, c.Env, c.File} {
			if f != "" {
				set++
			}
		}
		switch {
		case name == "" || len(name) > maxConfigName:
			return fmt.Errorf("config: entry names are 1 to %d bytes, got %d", maxConfigName, len(name))
		case set > 1:
			return fmt.Errorf("config %s: a value, an env or a file, not more than one", name)
		case len(c.Value) > maxConfigValue || len(c.Env) > maxConfigName || len(c.File) > maxConfigPath:
			return fmt.Errorf("config %s: too long", name)
		}
	}
	return nil
}
