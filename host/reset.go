package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddy-streams/eddy/registry"
)

// Reprocessing (eddy reset) moves a pipeline back to an earlier point of its
// input and rebuilds its state from there.
//
// The state lives in every node's own data directory, possibly on other
// machines, so the reset cannot wipe it: it tells the nodes through the
// registry topic instead, in two events. "reset" fences the pipeline: a
// running node that reads it stops (ErrReset), and a node that starts waits
// until the reset is done. Meanwhile Reset changes Kafka: it empties the
// changelogs (delete and create again: Kafka refuses DeleteRecords on a
// compact-only topic), commits the group's offsets (Kafka accepts offsets
// from outside the group only while it has no members: the fence is what
// keeps it empty), and optionally truncates the output. "reset_done" lifts
// the fence; a node that starts afterwards with a data directory older than
// the reset wipes its stores, which then restore from the empty changelogs
// (and tables from their topics), and reads the input from the new offsets.

// ErrReset is wrapped by the error Node.Run returns when a reset of the
// pipeline begins while the node runs (eddy reset --force): the node stops,
// aborting its open transaction. Started again, it waits for the reset to
// finish and rebuilds its state.
var ErrReset = errors.New("host: the pipeline is being reset")

// ErrRunning is wrapped by Reset's error when nodes of the pipeline are in
// its consumer group (and ResetOptions.Force is not set, or they did not
// leave in time). The error is a *RunningError, which lists them.
var ErrRunning = errors.New("nodes of the pipeline are running")

// RunningError lists the members of a pipeline's consumer group.
type RunningError struct {
	Group   string
	Members []GroupMember
}

func (e *RunningError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: consumer group %s has %d member(s):", ErrRunning, e.Group, len(e.Members))
	for _, m := range e.Members {
		b.WriteString(" " + m.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrRunning) true.
func (e *RunningError) Is(target error) bool { return target == ErrRunning }

// GroupMember is a member of a consumer group: a running node, or a static
// one that stopped and has not timed out yet.
type GroupMember struct {
	ClientID, Host, InstanceID string
}

func (m GroupMember) String() string {
	s := m.ClientID + " (" + strings.TrimPrefix(m.Host, "/")
	if m.InstanceID != "" {
		s += ", static instance " + m.InstanceID
	}
	return s + ")"
}

// ResetOptions configure Reset.
type ResetOptions struct {
	Brokers []string
	// To is where the source topics restart: their first records at or
	// after it (a partition without one restarts at its end). The zero
	// Time means their earliest records.
	To time.Time
	// TruncateOutput deletes the records of the sink, of its shadow topic
	// (when it exists) and of the late topic: the rerun writes them again.
	TruncateOutput bool
	// TruncateDeadLetters deletes the records of the dead-letter topic
	// too. It is separate because a dead-letter topic is often shared, or
	// worked through by people.
	TruncateDeadLetters bool
	// Force resets a pipeline whose nodes are running: they are told to
	// stop (through the registry), static members that remain in the
	// group are removed from it, and Reset waits up to Wait for the group
	// to be empty. Without Force, Reset refuses.
	Force bool
	// DryRun makes Reset plan and change nothing (it does not even create
	// the registry topic).
	DryRun bool
	// Wait bounds how long Reset waits for the group to be empty once it
	// has fenced the pipeline, and for a deleted changelog to be created
	// again. Default 1 minute.
	Wait time.Duration
	// RegistryTopic is the registry's topic. Default registry.DefaultTopic.
	RegistryTopic string
	// RegistryKey signs the reset's registry events (registry.Key of the
	// pipeline's admin token): nodes with a token refuse unsigned ones,
	// and would neither stop for the reset nor drop their state after it.
	// nil writes them unsigned.
	RegistryKey []byte
	// Node and Note are recorded with the reset's events. Node defaults to
	// the host name.
	Node, Note string
	Logger     *slog.Logger
}

// resetSettle is how long Reset waits after fencing the pipeline before it
// trusts that the group is empty: a node that read the registry just before
// the fence, and joins the group after Reset looked, reads the fence by then
// (it tails the registry from before it joins) and stops.
const resetSettle = 2 * time.Second

// ResetPlan is what a reset does (or, for a dry run, would do).
type ResetPlan struct {
	Pipeline, Group string
	To              time.Time // zero: earliest
	// Members were in the group when the plan was made; Force says the
	// reset stops them rather than refuse.
	Members []GroupMember
	Force   bool
	// Registry is the registry topic; Version the reset's version in the
	// pipeline's reset history (its reset_done is Version+1). Superseded is
	// an earlier reset that never finished, if any.
	Registry   string
	Version    int
	Superseded *registry.Event
	// Stores are the pipeline's stores that nodes wipe when they next
	// start (every partition).
	Stores   []string
	Recreate []TopicRecreate
	Offsets  []OffsetMove
	Truncate []Truncation
	// Kept says what the reset leaves alone, and why.
	Kept []string
}

// TopicRecreate is a changelog topic deleted and created again, empty, with
// the same partitions, replication factor and topic-level configs.
type TopicRecreate struct {
	Topic       string
	Partitions  int32
	Replication int16
	Configs     map[string]string
	id          kadm.TopicID
}

// OffsetMove is a committed offset of the group moved. From is -1 when the
// group had none.
type OffsetMove struct {
	Topic     string
	Partition int32
	From, To  int64
	Why       string
}

// Truncation deletes a partition's records from offset From to To
// (exclusive).
type Truncation struct {
	Topic     string
	Partition int32
	From, To  int64
	Why       string
}

// WriteTo prints the plan, one action a line.
func (pl *ResetPlan) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	to := "earliest (the first records of the source topics)"
	if !pl.To.IsZero() {
		to = pl.To.UTC().Format(time.RFC3339Nano) + " (the first records at or after it)"
	}
	fmt.Fprintf(&b, "reset pipeline %s (consumer group %s) to %s\n", pl.Pipeline, pl.Group, to)
	if len(pl.Members) == 0 {
		fmt.Fprintf(&b, "group %s: no members\n", pl.Group)
	} else {
		for _, m := range pl.Members {
			if pl.Force {
				fmt.Fprintf(&b, "group %s: member %s: told to stop; a static member that stays is removed (--force)\n", pl.Group, m)
			} else {
				fmt.Fprintf(&b, "group %s: member %s: the reset refuses while it is there (--force to stop it)\n", pl.Group, m)
			}
		}
	}
	stores := "none"
	if len(pl.Stores) > 0 {
		stores = strings.Join(pl.Stores, ", ")
	}
	fmt.Fprintf(&b, "registry %s: reset %d of pipeline %s: nodes stop, and wait until it is done (reset_done %d); "+
		"when they next start they wipe their local stores: %s\n", pl.Registry, pl.Version, pl.Pipeline, pl.Version+1, stores)
	if pl.Superseded != nil {
		fmt.Fprintf(&b, "registry %s: supersedes reset %d, which never finished\n", pl.Registry, pl.Superseded.Version)
	}
	for _, r := range pl.Recreate {
		keys := make([]string, 0, len(r.Configs))
		for k := range r.Configs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var cfg []string
		for _, k := range keys {
			cfg = append(cfg, k+"="+r.Configs[k])
		}
		fmt.Fprintf(&b, "recreate %s: delete the topic and create it again empty: %d partitions, replication factor %d, configs %s\n",
			r.Topic, r.Partitions, r.Replication, strings.Join(cfg, ","))
	}
	for _, o := range pl.Offsets {
		from := "none"
		if o.From >= 0 {
			from = strconv.FormatInt(o.From, 10)
		}
		fmt.Fprintf(&b, "offset %s[%d]: %s -> %d (%s)\n", o.Topic, o.Partition, from, o.To, o.Why)
	}
	for _, t := range pl.Truncate {
		fmt.Fprintf(&b, "truncate %s[%d]: delete offsets %d to %d (%d records; %s)\n", t.Topic, t.Partition, t.From, t.To-1, t.To-t.From, t.Why)
	}
	for _, k := range pl.Kept {
		fmt.Fprintf(&b, "keep %s\n", k)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// Reset resets a pipeline for reprocessing (see the package comment above
// ErrReset): it returns the plan it carried out. With DryRun it returns the
// plan and changes nothing. It refuses (a *RunningError) while the
// pipeline's consumer group has members, unless Force.
//
// A reset that fails after fencing the pipeline leaves it fenced: its nodes
// wait. Run Reset again to finish it.
func Reset(ctx context.Context, p *Pipeline, opts ResetOptions) (*ResetPlan, error) {
	if len(opts.Brokers) == 0 {
		return nil, errors.New("host: no brokers")
	}
	if opts.Wait <= 0 {
		opts.Wait = time.Minute
	}
	if opts.RegistryTopic == "" {
		opts.RegistryTopic = registry.DefaultTopic
	}
	if opts.Node == "" {
		opts.Node, _ = os.Hostname()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	log := opts.Logger.With("pipeline", p.Name)
	// Topics are deleted and created again here: metadata cached for
	// kadm's default 5s would be stale.
	cl, err := kgo.NewClient(kgo.SeedBrokers(opts.Brokers...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	// Nothing changes before the plan is checked: not even the registry
	// topic is created.
	var reg *registryLog
	openReg := func() (err error) {
		reg, err = openRegistry(ctx, opts.Brokers, opts.RegistryTopic, nil, log,
			registryTrust{pipeline: p.Name, key: opts.RegistryKey, unsigned: opts.RegistryKey == nil})
		return err
	}
	defer func() {
		if reg != nil {
			reg.close()
		}
	}()
	exists, err := topicExists(ctx, adm, opts.RegistryTopic)
	if err != nil {
		return nil, err
	}
	if exists {
		if err := openReg(); err != nil {
			return nil, err
		}
	}
	plan, err := planReset(ctx, adm, p, opts, reg)
	if err != nil {
		return plan, err
	}
	if len(plan.Members) > 0 && !opts.Force {
		return plan, &RunningError{Group: plan.Group, Members: plan.Members}
	}
	if opts.DryRun {
		return plan, nil
	}
	if reg == nil {
		if err := openReg(); err != nil {
			return plan, err
		}
	}

	// Fence the pipeline, then wait until no node is left in its group.
	begin, err := publishReset(ctx, reg, registry.Event{Pipeline: p.Name, Action: registry.ActionReset,
		To: resetTo(opts.To), Note: opts.Note, Node: opts.Node, Time: time.Now().UTC()})
	if err != nil {
		return plan, fmt.Errorf("reset: recording the reset in the registry: %w", err)
	}
	log.Info("reset begun: the pipeline's nodes stop, and new ones wait", "reset", begin.Version)
	select {
	case <-ctx.Done():
		return plan, ctx.Err()
	case <-time.After(resetSettle):
	}
	if err := waitEmptyGroup(ctx, adm, p.Name, opts, log); err != nil {
		return plan, fmt.Errorf("reset %d stays pending (its nodes wait; run the reset again): %w", begin.Version, err)
	}
	members, superseded := plan.Members, plan.Superseded
	// What the nodes did before they stopped is in the topics now: plan
	// again, with nothing moving.
	if plan, err = planReset(ctx, adm, p, opts, reg); err != nil {
		return plan, err
	}
	plan.Members, plan.Version, plan.Superseded = members, begin.Version, superseded
	if err := applyReset(ctx, adm, plan, opts, log); err != nil {
		return plan, fmt.Errorf("reset %d stays pending (its nodes wait; run the reset again): %w", begin.Version, err)
	}
	done, err := publishReset(ctx, reg, registry.Event{Pipeline: p.Name, Action: registry.ActionResetDone, Target: begin.Version,
		Note: opts.Note, Node: opts.Node, Time: time.Now().UTC()})
	if err != nil {
		return plan, fmt.Errorf("reset %d: recording its end in the registry (run the reset again): %w", begin.Version, err)
	}
	log.Info("reset done", "reset", begin.Version, "epoch", done.Version)
	return plan, nil
}

func resetTo(t time.Time) string {
	if t.IsZero() {
		return "earliest"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func topicExists(ctx context.Context, adm *kadm.Client, topic string) (bool, error) {
	ds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return false, fmt.Errorf("reset: topic %s: %w", topic, err)
	}
	d, ok := ds[topic]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return false, nil
	}
	if d.Err != nil {
		return false, fmt.Errorf("reset: topic %s: %w", topic, d.Err)
	}
	return true, nil
}

// groupMembers describes the pipeline's consumer group.
func groupMembers(ctx context.Context, adm *kadm.Client, group string) ([]GroupMember, error) {
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("reset: describe group %s: %w", group, err)
	}
	d, ok := ds[group]
	if !ok || errors.Is(d.Err, kerr.GroupIDNotFound) {
		return nil, nil
	}
	if d.Err != nil {
		return nil, fmt.Errorf("reset: describe group %s: %w", group, d.Err)
	}
	var ms []GroupMember
	for _, m := range d.Members {
		gm := GroupMember{ClientID: m.ClientID, Host: m.ClientHost}
		if m.InstanceID != nil {
			gm.InstanceID = *m.InstanceID
		}
		ms = append(ms, gm)
	}
	return ms, nil
}

// waitEmptyGroup waits until the group has no members. With Force, static
// members still there after resetSettle are removed: a static node that
// stops does not leave its group.
func waitEmptyGroup(ctx context.Context, adm *kadm.Client, group string, opts ResetOptions, log *slog.Logger) error {
	deadline := time.Now().Add(opts.Wait)
	for {
		ms, err := groupMembers(ctx, adm, group)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &RunningError{Group: group, Members: ms}
		}
		if opts.Force {
			var ids []string
			for _, m := range ms {
				if m.InstanceID != "" {
					ids = append(ids, m.InstanceID)
				}
			}
			if len(ids) > 0 {
				res, err := adm.LeaveGroup(ctx, kadm.LeaveGroup(group).InstanceIDs(ids...).Reason("eddy reset --force"))
				if err != nil {
					return fmt.Errorf("reset: removing static members %v from group %s: %w", ids, group, err)
				}
				for _, r := range res.Sorted() {
					if r.Err != nil && !errors.Is(r.Err, kerr.UnknownMemberID) {
						log.Warn("reset: could not remove a static member", "instance", r.InstanceID, "error", r.Err)
					}
				}
				log.Info("reset: removed static members from the group", "instances", ids)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// publishReset writes a reset event and reads the registry until it is
// back; it retries when another writer took the version number first.
func publishReset(ctx context.Context, r *registryLog, ev registry.Event) (registry.Event, error) {
	for range 5 {
		r.mu.Lock()
		next, err := r.st.Next(ev, nil)
		r.mu.Unlock()
		if err != nil {
			return next, err
		}
		if r.trust.key != nil {
			if err := registry.Sign(&next, r.trust.key); err != nil {
				return next, err
			}
		}
		rec, err := registry.EventRecord(&next)
		if err != nil {
			return next, err
		}
		res := r.cl.ProduceSync(ctx, &kgo.Record{Topic: r.topic, Partition: 0, Key: rec.Key, Value: rec.Value})
		if err := res.FirstErr(); err != nil {
			return next, fmt.Errorf("registry: write: %w", err)
		}
		for {
			r.mu.Lock()
			read := r.next > res[0].Record.Offset
			r.mu.Unlock()
			if read {
				break
			}
			if err := r.poll(ctx, false); err != nil {
				return next, fmt.Errorf("registry: reading back: %w", err)
			}
		}
		r.mu.Lock()
		rs := r.st.Resets(ev.Pipeline)
		r.mu.Unlock()
		for _, e := range rs.History {
			if e.ID == next.ID {
				return e, nil
			}
		}
	}
	return ev, ErrConflict
}

// storeNames are the names of the pipeline's stores in a data directory:
// stateful steps' and co-partitioned tables' (global tables live in memory).
func storeNames(p *Pipeline) []string {
	var names []string
	for _, s := range p.Steps {
		switch {
		case s.Kind == StepJoin && s.Table != "":
			if t := p.Table(s.Table); t != nil && !t.Global {
				names = append(names, tableStore(t.Name))
			}
		case s.Stateful():
			names = append(names, s.Name)
		}
		if s.Timed() {
			names = append(names, timerStore(s.Name))
		}
	}
	return names
}

// planReset reads the group and the topics and works out the reset.
func planReset(ctx context.Context, adm *kadm.Client, p *Pipeline, opts ResetOptions, reg *registryLog) (*ResetPlan, error) {
	plan := &ResetPlan{Pipeline: p.Name, Group: p.Name, To: opts.To, Registry: opts.RegistryTopic, Version: 1, Stores: storeNames(p),
		Force: opts.Force}
	if reg != nil {
		reg.view(func(st *registry.State) {
			rs := st.Resets(p.Name)
			plan.Version = len(rs.History) + 1
			plan.Superseded = rs.Pending
		})
	}
	var err error
	if plan.Members, err = groupMembers(ctx, adm, plan.Group); err != nil {
		return plan, err
	}

	// The topics the group consumes, by what a reset does to them.
	var sources, ends, tables []string // sources restart at To, tables at their start, the others at their end
	why := map[string]string{}
	for _, t := range p.Source.Topics {
		sources = append(sources, t)
		why[t] = "source topic"
	}
	changelogs := changelogTopics(p)
	for _, st := range p.Stages() {
		if !st.Last {
			ends = append(ends, st.Output)
			why[st.Output] = "repartition topic: its end, its old records are not processed again"
		}
		for topic, s := range st.Sides {
			if p.Steps[s].Table != "" {
				tables = append(tables, topic)
				why[topic] = "table " + p.Steps[s].Table + ": its start, read again in time order with the stream"
			} else if !slices.Contains(sources, topic) {
				sources = append(sources, topic)
				why[topic] = "stream joined by step " + p.Steps[s].Name
			}
		}
	}
	for _, t := range p.Tables {
		if t.Global {
			plan.Kept = append(plan.Kept, fmt.Sprintf("%s: global table %s, which every node reads from the start when it starts", t.Topic, t.Name))
		}
	}
	var outputs []string
	var taps []string // the topics steps, branches and named outputs write (to:)
	for _, s := range p.Steps {
		if s.To != "" && s.To != p.Sink.Topic && !slices.Contains(taps, s.To) {
			taps = append(taps, s.To)
		}
	}
	if opts.TruncateOutput {
		if p.Sink.Topic != "" {
			outputs = append(outputs, p.Sink.Topic, ShadowTopic(p.Sink.Topic))
			why[p.Sink.Topic] = "sink"
			why[ShadowTopic(p.Sink.Topic)] = "shadow output"
		}
		for _, t := range taps {
			outputs = append(outputs, t)
			why[t] = "output of a step (to:)"
		}
		if p.Late.Topic != "" {
			outputs = append(outputs, p.Late.Topic)
			why[p.Late.Topic] = "late records"
		}
	} else {
		if p.Sink.Topic != "" {
			plan.Kept = append(plan.Kept, p.Sink.Topic+": sink (--truncate-output to delete its records; the rerun writes its output again)")
		}
		for _, t := range taps {
			plan.Kept = append(plan.Kept, t+": output of a step (--truncate-output to delete its records; the rerun writes them again)")
		}
	}
	if p.DeadLetter.Topic != "" {
		if opts.TruncateDeadLetters {
			outputs = append(outputs, p.DeadLetter.Topic)
			why[p.DeadLetter.Topic] = "dead letters"
		} else {
			plan.Kept = append(plan.Kept, p.DeadLetter.Topic+": dead-letter topic (--truncate-dead-letters to delete its records)")
		}
	}
	all := slices.Concat(sources, ends, tables, changelogs, outputs)
	details, err := adm.ListTopics(ctx, all...)
	if err != nil {
		return plan, fmt.Errorf("reset: list topics: %w", err)
	}
	exists := func(t string) bool {
		d, ok := details[t]
		return ok && d.Err == nil
	}
	for _, t := range sources {
		if !exists(t) {
			return plan, fmt.Errorf("reset: source topic %s: not found", t)
		}
	}
	keep := func(ts []string) []string {
		return slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return !exists(t) })
	}
	ends, tables, changelogs, outputs = keep(ends), keep(tables), keep(changelogs), keep(outputs)

	// Changelogs: deleted and created again like they were.
	if len(changelogs) > 0 {
		cfgs, err := adm.DescribeTopicConfigs(ctx, changelogs...)
		if err != nil {
			return plan, fmt.Errorf("reset: changelog configs: %w", err)
		}
		for _, t := range changelogs {
			d := details[t]
			rc := TopicRecreate{Topic: t, Partitions: int32(len(d.Partitions)), Replication: -1, Configs: map[string]string{}, id: d.ID}
			if pd, ok := d.Partitions[0]; ok {
				rc.Replication = int16(len(pd.Replicas))
			}
			rcfg, err := cfgs.On(t, nil)
			if err == nil && rcfg.Err != nil {
				err = rcfg.Err
			}
			if err != nil {
				return plan, fmt.Errorf("reset: configs of %s: %w", t, err)
			}
			for _, c := range rcfg.Configs {
				if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
					rc.Configs[c.Key] = *c.Value
				}
			}
			if rc.Configs["cleanup.policy"] == "" {
				rc.Configs["cleanup.policy"] = "compact"
			}
			plan.Recreate = append(plan.Recreate, rc)
		}
	}

	// Offsets.
	committed, err := adm.FetchOffsets(ctx, plan.Group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return plan, fmt.Errorf("reset: committed offsets of group %s: %w", plan.Group, err)
	}
	var targets kadm.ListedOffsets
	if opts.To.IsZero() {
		targets, err = adm.ListStartOffsets(ctx, sources...)
	} else {
		targets, err = adm.ListOffsetsAfterMilli(ctx, opts.To.UnixMilli(), sources...)
	}
	if err != nil {
		return plan, fmt.Errorf("reset: offsets of the source topics: %w", err)
	}
	// A co-partitioned table is read again from its start: the store is
	// wiped, and the stream records processed again meet each version
	// of the table at their time, as they did the first time (as far
	// as compaction kept the versions).
	for _, other := range []struct {
		topics []string
		list   func(context.Context, ...string) (kadm.ListedOffsets, error)
	}{{ends, adm.ListEndOffsets}, {tables, adm.ListStartOffsets}} {
		if len(other.topics) == 0 {
			continue
		}
		e, err := other.list(ctx, other.topics...)
		if err != nil {
			return plan, fmt.Errorf("reset: offsets of %s: %w", strings.Join(other.topics, ", "), err)
		}
		e.Each(func(o kadm.ListedOffset) {
			if targets[o.Topic] == nil {
				targets[o.Topic] = map[int32]kadm.ListedOffset{}
			}
			targets[o.Topic][o.Partition] = o
		})
	}
	sourceWhy := "earliest"
	if !opts.To.IsZero() {
		sourceWhy = "the first record at or after " + resetTo(opts.To)
	}
	for _, t := range sources {
		why[t] += ", " + sourceWhy
	}
	for _, t := range slices.Concat(sources, ends, tables) {
		parts := details[t].Partitions.Numbers()
		slices.Sort(parts)
		for _, part := range parts {
			o, ok := targets.Lookup(t, part)
			if !ok || o.Err != nil {
				return plan, fmt.Errorf("reset: offset of %s[%d]: %v", t, part, o.Err)
			}
			mv := OffsetMove{Topic: t, Partition: part, From: -1, To: o.Offset, Why: why[t]}
			if c, ok := committed.Lookup(t, part); ok && c.Err == nil {
				mv.From = c.At
			}
			plan.Offsets = append(plan.Offsets, mv)
		}
	}

	// Output truncation: Kafka deletes records only from topics whose
	// cleanup policy includes delete.
	if len(outputs) > 0 {
		cfgs, err := adm.DescribeTopicConfigs(ctx, outputs...)
		if err != nil {
			return plan, fmt.Errorf("reset: output topic configs: %w", err)
		}
		starts, err := adm.ListStartOffsets(ctx, outputs...)
		if err != nil {
			return plan, fmt.Errorf("reset: output start offsets: %w", err)
		}
		stops, err := adm.ListEndOffsets(ctx, outputs...)
		if err != nil {
			return plan, fmt.Errorf("reset: output end offsets: %w", err)
		}
		for _, t := range outputs {
			if rc, err := cfgs.On(t, nil); err == nil && rc.Err == nil {
				for _, c := range rc.Configs {
					if c.Key == "cleanup.policy" && !strings.Contains(c.MaybeValue(), "delete") {
						return plan, fmt.Errorf("reset: cannot truncate %s (%s): its cleanup.policy is %s, and Kafka deletes records only "+
							"from topics with the delete policy; empty it another way, or reset without truncating it", t, why[t], c.MaybeValue())
					}
				}
			}
			parts := details[t].Partitions.Numbers()
			slices.Sort(parts)
			for _, part := range parts {
				s, ok1 := starts.Lookup(t, part)
				e, ok2 := stops.Lookup(t, part)
				if !ok1 || !ok2 || s.Err != nil || e.Err != nil {
					return plan, fmt.Errorf("reset: offsets of %s[%d]: %v", t, part, errors.Join(s.Err, e.Err))
				}
				if e.Offset > s.Offset {
					plan.Truncate = append(plan.Truncate, Truncation{Topic: t, Partition: part, From: s.Offset, To: e.Offset, Why: why[t]})
				}
			}
		}
	}
	return plan, nil
}

// applyReset carries out a plan's Kafka changes: changelogs, offsets,
// truncation.
func applyReset(ctx context.Context, adm *kadm.Client, plan *ResetPlan, opts ResetOptions, log *slog.Logger) error {
	for _, rc := range plan.Recreate {
		if err := recreateTopic(ctx, adm, rc, opts.Wait); err != nil {
			return err
		}
		log.Info("reset: changelog emptied", "topic", rc.Topic)
	}
	if len(plan.Offsets) > 0 {
		var offs kadm.Offsets
		for _, o := range plan.Offsets {
			offs.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.To, LeaderEpoch: -1})
		}
		res, err := adm.CommitOffsets(ctx, plan.Group, offs)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			return fmt.Errorf("reset: commit the offsets of group %s: %w", plan.Group, err)
		}
		log.Info("reset: offsets committed", "group", plan.Group, "partitions", len(plan.Offsets))
	}
	if len(plan.Truncate) > 0 {
		var offs kadm.Offsets
		for _, t := range plan.Truncate {
			offs.Add(kadm.Offset{Topic: t.Topic, Partition: t.Partition, At: t.To})
		}
		res, err := adm.DeleteRecords(ctx, offs)
		if err != nil {
			return fmt.Errorf("reset: delete records: %w", err)
		}
		for _, t := range plan.Truncate {
			if r, ok := res.Lookup(t.Topic, t.Partition); !ok || r.Err != nil {
				return fmt.Errorf("reset: delete records of %s[%d]: %v", t.Topic, t.Partition, r.Err)
			}
		}
		log.Info("reset: output truncated", "partitions", len(plan.Truncate))
	}
	return nil
}

// recreateTopic deletes a topic and creates it again. Kafka deletes topics
// in the background: creating fails with TopicAlreadyExists until the old
// one is gone. A topic with a new ID means a node created it meanwhile (as
// nodes do at start): it is empty too.
func recreateTopic(ctx context.Context, adm *kadm.Client, rc TopicRecreate, wait time.Duration) error {
	if _, err := adm.DeleteTopic(ctx, rc.Topic); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("reset: delete topic %s: %w", rc.Topic, err)
	}
	configs := map[string]*string{}
	for k, v := range rc.Configs {
		configs[k] = &v
	}
	deadline := time.Now().Add(wait)
	for {
		_, err := adm.CreateTopic(ctx, rc.Partitions, rc.Replication, configs, rc.Topic)
		if err == nil {
			return nil
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("reset: create topic %s again: %w", rc.Topic, err)
		}
		if ds, lerr := adm.ListTopics(ctx, rc.Topic); lerr == nil {
			if d, ok := ds[rc.Topic]; ok && d.Err == nil && d.ID != rc.id && d.ID != (kadm.TopicID{}) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reset: topic %s: still being deleted after %s", rc.Topic, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Node side.

// resetStore is the store in a data directory that records the reset epoch
// its state was built after (a name no step can have).
const resetStore = "reset:epoch"

var epochKey = []byte("epoch")

// awaitReset runs at the node's start, once the registry is read: it waits
// while a reset of the pipeline is pending, then, if a reset finished since
// the data directory last saw one, wipes the pipeline's stores (every
// partition) so that they restore from the emptied changelogs and table
// topics.
func (n *Node) awaitReset(ctx context.Context) error {
	waiting := false
	for {
		var rs registry.ResetState
		n.reg.view(func(st *registry.State) { rs = st.Resets(n.p.Name) })
		if rs.Pending == nil {
			if waiting {
				n.log.Info("reset finished", "epoch", rs.Epoch)
			}
			break
		}
		if !waiting {
			n.log.Warn("the pipeline is being reset: waiting until the reset is done", "reset", rs.Pending.Version,
				"to", rs.Pending.To, "by", rs.Pending.Node)
			waiting = true
		}
		if err := n.reg.poll(ctx, false); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			n.log.Warn("registry: fetch failed; retrying", "error", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
	if n.db == nil {
		return nil
	}
	var epoch int
	n.reg.view(func(st *registry.State) { epoch = st.Resets(n.p.Name).Epoch })
	es := n.db.Store(n.p.Name, resetStore, 0)
	v, _, err := es.Get(epochKey)
	if err != nil {
		return err
	}
	local, _ := strconv.Atoi(string(v))
	if local >= epoch {
		return nil
	}
	parts := n.parts
	if parts == 0 {
		if parts, err = PartitionCount(ctx, n.cfg.Brokers, n.p.Source.Topics...); err != nil {
			return err
		}
	}
	names := storeNames(n.p)
	for _, name := range names {
		for part := range parts {
			if err := n.db.Store(n.p.Name, name, part).Wipe(); err != nil {
				return fmt.Errorf("reset: wiping store %s[%d]: %w", name, part, err)
			}
		}
	}
	es.Put(epochKey, []byte(strconv.Itoa(epoch)))
	if err := es.Commit(0); err != nil {
		return fmt.Errorf("reset: recording epoch %d: %w", epoch, err)
	}
	n.log.Info("local state from before a reset wiped: stores restore from their changelogs", "epoch", epoch,
		"was", local, "stores", names, "partitions", parts)
	return nil
}

// watchResets wraps the registry's event callback: a reset of the pipeline
// that begins while the node runs stops it.
func (n *Node) watchResets(next func(*registry.Event)) func(*registry.Event) {
	return func(ev *registry.Event) {
		if !registry.IsReset(ev.Action) {
			next(ev)
			return
		}
		if ev.Pipeline == n.p.Name && ev.Action == registry.ActionReset {
			n.fail(fmt.Errorf("%w: reset %d (to %s, by %s): the node stops; start it again to continue after the reset",
				ErrReset, ev.Version, ev.To, ev.Node))
		}
	}
}
