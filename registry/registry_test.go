package registry

import (
	"bytes"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// apply feeds records to s, failing the test on an error.
func apply(t *testing.T, s *State, recs ...Record) []*Event {
	t.Helper()
	var evs []*Event
	for _, r := range recs {
		ev, err := s.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		if ev != nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

// deploy writes a module and an event for it, as a node does.
func deploy(t *testing.T, s *State, module []byte, ev Event) *Event {
	t.Helper()
	apply(t, s, ModuleRecords(module, 7)...)
	ev.Digest = Digest(module)
	ev, err := s.Next(ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := EventRecord(&ev)
	if err != nil {
		t.Fatal(err)
	}
	evs := apply(t, s, r)
	if len(evs) != 1 {
		t.Fatalf("event %+v did not take effect", ev)
	}
	return evs[0]
}

func TestChunksReassembleAndVerify(t *testing.T) {
	module := bytes.Repeat([]byte("wasm!"), 100)
	recs := ModuleRecords(module, 64)
	if len(recs) != 8 {
		t.Fatalf("%d chunks, want 8", len(recs))
	}
	s := NewState()
	// Out of order, with a duplicate.
	apply(t, s, recs[3], recs[0], recs[7], recs[3])
	if _, ok := s.Module(Digest(module)); ok {
		t.Fatal("module complete before all chunks")
	}
	apply(t, s, recs[1], recs[2], recs[4], recs[5], recs[6])
	if m, ok := s.Module(Digest(module)); !ok || !bytes.Equal(m, module) {
		t.Fatal("module not reassembled")
	}
	// A chunk that does not belong fails the digest check.
	bad := ModuleRecords([]byte("abc"), 2)
	bad[1].Value = []byte("X")
	apply(t, s, bad[0])
	if _, err := s.Apply(bad[1]); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Fatalf("corrupt module: %v", err)
	}
	if _, err := s.Apply(Record{Key: []byte("zzz")}); err == nil {
		t.Fatal("unknown key accepted")
	}
}

func TestHistoryDeployRollbackShadow(t *testing.T) {
	s := NewState()
	v1, v2, v3 := []byte("module one"), []byte("module two"), []byte("module three")
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	e1 := deploy(t, s, v1, Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Time: at, Note: "first"})
	e2 := deploy(t, s, v2, Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Time: at})
	if e1.Version != 1 || e2.Version != 2 || s.Step("p", "s").Live.Digest != Digest(v2) {
		t.Fatalf("versions %d %d, live %+v", e1.Version, e2.Version, s.Step("p", "s").Live)
	}
	// Rollback without a target returns to the previous live version.
	rb, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionRollback}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Target != 1 || rb.Digest != Digest(v1) || rb.Version != 3 {
		t.Fatalf("rollback %+v", rb)
	}
	r, _ := EventRecord(&rb)
	apply(t, s, r)
	if live := s.Step("p", "s").Live; live.Version != 3 || live.Digest != Digest(v1) {
		t.Fatalf("live after rollback %+v", live)
	}
	// Rolling back again goes to version 2 (module two).
	rb, err = s.Next(Event{Pipeline: "p", Step: "s", Action: ActionRollback}, nil)
	if err != nil || rb.Target != 2 {
		t.Fatalf("second rollback %+v %v", rb, err)
	}
	// Shadow, then promote.
	sh := deploy(t, s, v3, Event{Pipeline: "p", Step: "s", Action: ActionShadow})
	if st := s.Step("p", "s"); st.Shadow == nil || st.Shadow.Version != sh.Version || st.Live.Digest != Digest(v1) {
		t.Fatalf("after shadow: %+v", st)
	}
	pr, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionPromote}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ = EventRecord(&pr)
	apply(t, s, r)
	if st := s.Step("p", "s"); st.Shadow != nil || st.Live.Digest != Digest(v3) || len(st.History) != 5 {
		t.Fatalf("after promote: %+v", st)
	}
	if _, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionDiscard}, nil); err == nil {
		t.Fatal("discard without a shadow accepted")
	}
	if _, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionRollback, Target: 9}, nil); err == nil {
		t.Fatal("rollback to a version that does not exist accepted")
	}
	if _, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest([]byte("never uploaded"))}, nil); err == nil {
		t.Fatal("deploy of a missing module accepted")
	}
}

// Two writers that prepare the same version: the first record in the log
// wins for every reader, the second is ignored.
func TestRaceForAVersionNumber(t *testing.T) {
	s := NewState()
	a, b := []byte("module a"), []byte("module b")
	apply(t, s, ModuleRecords(a, 0)...)
	apply(t, s, ModuleRecords(b, 0)...)
	ea, _ := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest(a)}, nil)
	eb, _ := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest(b)}, nil)
	ra, _ := EventRecord(&ea)
	rb, _ := EventRecord(&eb)
	if bytes.Equal(ra.Key, rb.Key) {
		t.Fatal("two events share a key: compaction would drop one")
	}
	evs := apply(t, s, ra, rb)
	if len(evs) != 1 || evs[0].Digest != Digest(a) {
		t.Fatalf("took effect: %+v", evs)
	}
	if h := s.Step("p", "s").History; len(h) != 1 {
		t.Fatalf("history %+v", h)
	}
}

// reset prepares and applies a pipeline reset event, as eddy reset does.
func reset(t *testing.T, s *State, ev Event) *Event {
	t.Helper()
	ev, err := s.Next(ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := EventRecord(&ev)
	if err != nil {
		t.Fatal(err)
	}
	evs := apply(t, s, r)
	if len(evs) != 1 {
		t.Fatalf("event %+v did not take effect", ev)
	}
	return evs[0]
}

// A pipeline's resets have their own numbered history: a reset is pending
// from its begin to its reset_done, and the epoch counts the finished ones.
// They are kept apart from the steps' histories.
func TestResetHistory(t *testing.T) {
	s := NewState()
	deploy(t, s, []byte("module"), Event{Pipeline: "p", Step: "s", Action: ActionDeploy})
	if rs := s.Resets("p"); rs.Pending != nil || rs.Epoch != 0 || len(rs.History) != 0 {
		t.Fatalf("before any reset: %+v", rs)
	}
	if _, err := s.Next(Event{Pipeline: "p", Action: ActionResetDone}, nil); err == nil {
		t.Fatal("reset_done without a pending reset accepted")
	}
	if _, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionReset}, nil); err == nil {
		t.Fatal("a reset of a step accepted")
	}
	b1 := reset(t, s, Event{Pipeline: "p", Action: ActionReset, To: "earliest"})
	if b1.Version != 1 || s.Resets("p").Pending == nil || s.Resets("p").Pending.Version != 1 || s.Resets("p").Epoch != 0 {
		t.Fatalf("after begin: %+v", s.Resets("p"))
	}
	// A second reset supersedes the unfinished first; only its done counts.
	b2 := reset(t, s, Event{Pipeline: "p", Action: ActionReset, To: "2026-01-02T03:04:05Z"})
	stale := Event{Pipeline: "p", Action: ActionResetDone, Target: b1.Version, Version: 3}
	r, _ := EventRecord(&stale)
	if evs := apply(t, s, r); len(evs) != 0 {
		t.Fatalf("done of a superseded reset took effect: %+v", evs)
	}
	d := reset(t, s, Event{Pipeline: "p", Action: ActionResetDone})
	rs := s.Resets("p")
	if d.Target != b2.Version || d.Version != 3 || rs.Pending != nil || rs.Epoch != 3 || len(rs.History) != 3 {
		t.Fatalf("after done: %+v (done %+v)", rs, d)
	}
	if rs.History[1].To != "2026-01-02T03:04:05Z" {
		t.Fatalf("history %+v", rs.History)
	}
	// Other pipelines and the steps are untouched.
	if o := s.Resets("q"); o.Epoch != 0 || o.Pending != nil {
		t.Fatalf("pipeline q: %+v", o)
	}
	if steps := s.Steps(""); len(steps) != 1 || len(steps[0].History) != 1 {
		t.Fatalf("steps %+v", steps)
	}
	// The copy is the caller's.
	rs.History[0].To = "changed"
	if s.Resets("p").History[0].To != "earliest" {
		t.Fatal("Resets returned the registry's own history")
	}
	// A reset event that reached a step's history (written with a step by
	// hand) is skipped by every reader alike.
	bad := Event{Pipeline: "p", Step: "s", Action: ActionReset, Version: 2}
	r, _ = EventRecord(&bad)
	if evs := apply(t, s, r); len(evs) != 0 || len(s.Step("p", "s").History) != 1 {
		t.Fatalf("step reset took effect: %+v", evs)
	}
}

// TestVersionConfig: a deploy's config is its version's; a deploy without
// one carries on the live version's, a rollback takes its target's, a
// promotion its shadow's; the config is signed, and config that breaks the
// limits, or on an event that cannot carry it, does not apply.
func TestVersionConfig(t *testing.T) {
	if maxConfigEntries != abi.MaxConfigEntries || maxConfigName != abi.MaxConfigName || maxConfigValue != abi.MaxConfigValue {
		t.Fatal("the registry's config bounds are not the ABI's")
	}
	s := NewState()
	m1, m2, m3 := []byte("module one"), []byte("module two"), []byte("module three")
	c1 := map[string]ConfigEntry{"threshold": {Value: "10"}, "token": {Env: "TOKEN"}}
	c3 := map[string]ConfigEntry{"threshold": {Value: "30"}}
	e1 := deploy(t, s, m1, Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Config: c1})
	e2 := deploy(t, s, m2, Event{Pipeline: "p", Step: "s", Action: ActionDeploy})
	if !maps.Equal(e1.Config, c1) || !maps.Equal(e2.Config, c1) {
		t.Fatalf("configs %v, %v; want %v for both (the second carries on the first's)", e1.Config, e2.Config, c1)
	}
	sh := deploy(t, s, m3, Event{Pipeline: "p", Step: "s", Action: ActionShadow, Config: c3})
	pr, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionPromote}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := EventRecord(&pr)
	apply(t, s, r)
	if live := s.Step("p", "s").Live; !maps.Equal(sh.Config, c3) || !maps.Equal(live.Config, c3) {
		t.Fatalf("shadow config %v, promoted %v; want %v", sh.Config, live.Config, c3)
	}
	rb, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionRollback, Target: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ = EventRecord(&rb)
	apply(t, s, r)
	if live := s.Step("p", "s").Live; !maps.Equal(live.Config, c1) {
		t.Fatalf("after a rollback to version 1: %v, want %v", live.Config, c1)
	}

	// Signed: changing the config breaks the signature.
	key := []byte("0123456789abcdef0123456789abcdef")
	ev := Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Config: c1}
	if err := Sign(&ev, key); err != nil {
		t.Fatal(err)
	}
	if !Verify(ev, key) {
		t.Fatal("a signed event with config does not verify")
	}
	ev.Config = c3
	if Verify(ev, key) {
		t.Fatal("an event whose config changed after signing verifies")
	}

	for _, bad := range []Event{
		{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest(m1), Config: map[string]ConfigEntry{"x": {Value: "v", Env: "E"}}},
		{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest(m1), Config: map[string]ConfigEntry{"": {Value: "v"}}},
		{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest(m1), Config: map[string]ConfigEntry{"x": {Value: strings.Repeat("v", 65<<10)}}},
		{Pipeline: "p", Step: "s", Action: ActionRollback, Target: 1, Digest: Digest(m1), Config: c3},
	} {
		if _, err := s.Next(bad, nil); err == nil {
			t.Errorf("event %s with config %d entries accepted", bad.Action, len(bad.Config))
		}
	}
}
