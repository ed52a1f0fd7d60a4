package host

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eddy-streams/eddy/state"
)

// This file exports the node's Prometheus metrics (docs/metrics.md lists
// them). Most are read at scrape time from what the node counts anyway
// (Stats, observe.go's per-task and per-partition progress), so the hot
// path is not counted twice. What the node does not keep is observed where
// it happens, once per batch: each step's records and time (stepMeter),
// batch sizes, commit latency, swap pauses, restores.
//
// Each node has its own registry (tests run several nodes in a process), and
// every metric of it carries the labels pipeline and node.

// metrics are a node's Prometheus metrics. The fields are written by the
// node's goroutines and read by scrapes: atomics and Prometheus observers,
// all safe for concurrent use.
type metrics struct {
	reg   *prometheus.Registry
	steps []stepMetrics // per step of the pipeline
	// batchRecords observes the records of each batch a task processes,
	// per stage.
	batchRecords []prometheus.Observer
	commit       prometheus.Observer // exactly_once: seconds to end a committed transaction
	swapPause    prometheus.Observer // seconds a task paused to switch versions
	taskRebuilds atomic.Int64        // tasks rebuilt after an aborted transaction
	syncTimeouts atomic.Int64        // waits for a lagging partition that passed max_idle (timesync.go)
	// formatRefused counts records the source's format refused
	// ([false]) and outputs the sink's did ([true]) (formats.go).
	formatRefused [2]atomic.Int64
	db            atomic.Pointer[state.DB]
	restores      struct {
		active, done, records, remaining atomic.Int64
		mu                               sync.Mutex
		now                              map[*restoreMeter]struct{} // the restores under way, for status
	}
	// stateRebuilds counts stores rebuilt from their changelog, per
	// reason (rebuildReasons).
	stateRebuilds [len(rebuildReasons)]atomic.Int64
	// standbyFailures counts the rounds of standby followers that failed;
	// standbyRecords the changelog records standby copies applied.
	standbyFailures, standbyRecords atomic.Int64
	// fenced counts departed nodes' transactional ids this node fenced
	// (fence.go).
	fenced atomic.Int64
}

// stateRebuilt counts a store rebuilt for reason.
func (m *metrics) stateRebuilt(reason string) {
	if i := slices.Index(rebuildReasons[:], reason); i >= 0 {
		m.stateRebuilds[i].Add(1)
	}
}

// stepMetrics are one step's counts, summed over the node's tasks.
type stepMetrics struct {
	in, out, dropped, deadLettered atomic.Int64
	// rebuilds counts the step's instances rebuilt after a failure (a
	// trap, a timeout, exhausted memory).
	rebuilds atomic.Int64
	// corrupt counts the entries of the step's state and input skipped as
	// corrupt, by kind (corrupt.go).
	corrupt [nCorruptKinds]atomic.Int64
	// lostResults counts an aggregate step's window results dropped
	// because its function failed on them when no record asked for them.
	lostResults atomic.Int64
	// tapped counts the records written to the step's to: topic.
	tapped atomic.Int64
	// timersFired counts the timers of the step that fired.
	timersFired atomic.Int64
	seconds     prometheus.Observer // time of the step over one batch
}

func newMetrics(n *Node) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), steps: make([]stepMetrics, len(n.p.Steps))}
	calls := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "eddy_function_call_seconds",
		Help: "Time a step took over one batch: the call into its function (map, filter, flat_map), with the host's windowing and state work for aggregate, join and key_by steps.",
		// 10µs to 5s.
		Buckets: prometheus.ExponentialBuckets(10e-6, 3, 13),
	}, []string{"step"})
	for i, s := range n.p.Steps {
		m.steps[i].seconds = calls.WithLabelValues(s.Name)
	}
	batches := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "eddy_batch_records",
		Help:    "Records per batch processed by a task, by stage.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 15), // 1 to 16384
	}, []string{"stage"})
	for i := range n.stages {
		m.batchRecords = append(m.batchRecords, batches.WithLabelValues(strconv.Itoa(i)))
	}
	commit := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "eddy_transaction_commit_seconds",
		Help: "Time to end a committed transaction (exactly_once): waiting for the tasks' queued batches and the produces' acks, writing the changelogs and committing.",
		// 1ms to 8s.
		Buckets: prometheus.ExponentialBuckets(1e-3, 2, 14),
	})
	m.commit = commit
	pause := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "eddy_swap_pause_seconds",
		Help:    "Time a task paused before a batch to switch to new function versions (hot swap).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 4, 10), // 10µs to 2.6s
	})
	m.swapPause = pause
	node := prometheus.WrapCollectorWith(prometheus.Labels{"pipeline": n.p.Name, "node": n.cfg.NodeID},
		collectorSet{calls, batches, commit, pause, nodeCollector{n}})
	m.reg.MustRegister(collectorSet{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), node})
	return m
}

// collectorSet is collectors registered as one. A Prometheus registry
// gathers each registered collector in a goroutine of its own and yields
// (runtime.Gosched) whenever it waits for one to begin, and on a node busy
// with a restore, each yield queued a scrape behind the node's other
// goroutines for tens of milliseconds. A single collector is gathered in
// one goroutine, which goes through the set in order.
type collectorSet []prometheus.Collector

// Describe implements prometheus.Collector.
func (cs collectorSet) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (cs collectorSet) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}

// Metrics returns the handler of the node's Prometheus metrics, in the text
// exposition format (what GET /metrics serves; docs/metrics.md lists them).
// It may be served before Run and after it returns.
func (n *Node) Metrics() http.Handler {
	return promhttp.HandlerFor(n.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// stepMeter counts a batch's records in and out of each step of a task and
// times each step. Steps run one after another, so the end of one step is
// the start of the next: enter is called before each step, leave after the
// last. Its zero value is ready; it lives on the stack of one process call.
type stepMeter struct {
	on       bool // a step is being metered
	step     int
	start    time.Time
	rebuilds int // the step's instance's Rebuilds at its start
}

// enter starts metering step s of t, which receives in records, and ends
// the step before it, which returned prevOut records (its output: in a
// chain the same as in, not when steps name their inputs).
func (sm *stepMeter) enter(t *task, s, in, prevOut int) {
	now := time.Now()
	if sm.on {
		sm.finish(t, prevOut, now)
	} else {
		t.n.metrics.batchRecords[t.key.stage].Observe(float64(in))
	}
	sm.on, sm.step, sm.start = true, s, now
	t.n.metrics.steps[s].in.Add(int64(in))
	if inst := t.inst(s); inst != nil {
		sm.rebuilds = inst.Rebuilds()
	}
}

// leave ends the last step, which returned out records.
func (sm *stepMeter) leave(t *task, out int) {
	if sm.on {
		sm.finish(t, out, time.Now())
	}
}

func (sm *stepMeter) finish(t *task, out int, now time.Time) {
	m := &t.n.metrics.steps[sm.step]
	m.out.Add(int64(out))
	m.seconds.Observe(now.Sub(sm.start).Seconds())
	if inst := t.inst(sm.step); inst != nil {
		if d := inst.Rebuilds() - sm.rebuilds; d > 0 {
			m.rebuilds.Add(int64(d))
		}
	}
	sm.on = false
}

// countDropped counts d input records of step s that neither failed nor
// produced anything (a filter's rejects, a flat_map's empty answers).
func (m *metrics) countDropped(s, d int) {
	if d > 0 {
		m.steps[s].dropped.Add(int64(d))
	}
}

// restoreMeter follows one store's restore from its changelog.
type restoreMeter struct {
	m     *metrics
	topic string // the changelog (or a table's topic)
	part  int32
	began time.Time
	left  int64 // records between the restore's position and the changelog's end
	// standby marks a standby copy catching up (standby.go): counted as
	// standby work, not as a restore a task waits for.
	standby bool
	// For status, read while the restore goes on.
	restoredNow, leftNow atomic.Int64
}

// restoring notes a restore of partition part of topic starting with left
// records to read (0 when the end is unknown); call done when it ends.
func (m *metrics) restoring(topic string, part int32, left int64, standby bool) *restoreMeter {
	left = max(left, 0)
	if standby {
		return &restoreMeter{m: m, topic: topic, part: part, began: time.Now(), standby: true}
	}
	m.restores.active.Add(1)
	m.restores.remaining.Add(left)
	r := &restoreMeter{m: m, topic: topic, part: part, began: time.Now(), left: left}
	r.leftNow.Store(left)
	m.restores.mu.Lock()
	if m.restores.now == nil {
		m.restores.now = map[*restoreMeter]struct{}{}
	}
	m.restores.now[r] = struct{}{}
	m.restores.mu.Unlock()
	return r
}

// restored notes records restored, with left still to read.
func (r *restoreMeter) restored(records int, left int64) {
	if r.standby {
		r.m.standbyRecords.Add(int64(records))
		return
	}
	left = max(left, 0)
	r.m.restores.records.Add(int64(records))
	r.m.restores.remaining.Add(left - r.left)
	r.left = left
	r.restoredNow.Add(int64(records))
	r.leftNow.Store(left)
}

func (r *restoreMeter) done() {
	if r.standby {
		return
	}
	r.m.restores.remaining.Add(-r.left)
	r.m.restores.active.Add(-1)
	r.m.restores.done.Add(1)
	r.m.restores.mu.Lock()
	delete(r.m.restores.now, r)
	r.m.restores.mu.Unlock()
}

// RestoreStatus is a store's restore under way.
type RestoreStatus struct {
	Topic     string    `json:"topic"` // the store's changelog, or a table's topic
	Partition int32     `json:"partition"`
	Began     time.Time `json:"began"`
	Restored  int64     `json:"restored"`  // records read so far
	Remaining int64     `json:"remaining"` // records left to the end it restores to
}

// restoresNow lists the restores under way, by topic and partition.
func (m *metrics) restoresNow() []RestoreStatus {
	m.restores.mu.Lock()
	var rs []RestoreStatus
	for r := range m.restores.now {
		rs = append(rs, RestoreStatus{Topic: r.topic, Partition: r.part, Began: r.began,
			Restored: r.restoredNow.Load(), Remaining: r.leftNow.Load()})
	}
	m.restores.mu.Unlock()
	slices.SortFunc(rs, func(a, b RestoreStatus) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return rs
}

// nodeCollector reads a node's counters at scrape time.
type nodeCollector struct{ n *Node }

var (
	labelsStep  = []string{"step"}
	labelsTask  = []string{"stage", "partition"}
	labelsInput = []string{"topic", "partition"}

	descIn            = prometheus.NewDesc("eddy_records_in_total", "Records taken from the source topics.", nil, nil)
	descOut           = prometheus.NewDesc("eddy_records_out_total", "Records written to the sink topic.", nil, nil)
	descDeadLettered  = prometheus.NewDesc("eddy_dead_letter_records_total", "Records sent to the dead-letter topic.", nil, nil)
	descLate          = prometheus.NewDesc("eddy_late_records_total", "Records later than their window's grace (sent to the late topic, if any).", nil, nil)
	descOverload      = prometheus.NewDesc("eddy_overload_dropped_records_total", "Records dropped by the overload policy (drop, sample) when a task's queue was full.", nil, nil)
	descShadowOut     = prometheus.NewDesc("eddy_shadow_records_out_total", "Records written to a shadow's topic.", nil, nil)
	descShadowFailed  = prometheus.NewDesc("eddy_shadow_failed_records_total", "Records a shadow function failed on.", nil, nil)
	descCommits       = prometheus.NewDesc("eddy_commits_total", "Transactions committed (exactly_once); offset commits (at_most_once).", nil, nil)
	descAborts        = prometheus.NewDesc("eddy_transaction_aborts_total", "Transactions aborted (exactly_once); their records are processed again.", nil, nil)
	descBufRecords    = prometheus.NewDesc("eddy_fetch_buffered_records", "Records fetched and not yet polled (the Kafka client's buffer).", nil, nil)
	descBufBytes      = prometheus.NewDesc("eddy_fetch_buffered_bytes", "Bytes fetched and not yet polled (the Kafka client's buffer).", nil, nil)
	descRegRefused    = prometheus.NewDesc("eddy_registry_refused_total", "Registry records the node skipped: malformed, over a limit, or events not signed with its key.", nil, nil)
	descBadVersions   = prometheus.NewDesc("eddy_registry_bad_versions_total", "Registry versions of the node's steps that did not load; the node kept or fell back to an earlier version.", nil, nil)
	descSwaps         = prometheus.NewDesc("eddy_swaps_total", "Times the node switched steps to new function versions or shadows (deploy, rollback, promote, discard).", nil, nil)
	descTaskRebuilds  = prometheus.NewDesc("eddy_task_rebuilds_total", "Tasks rebuilt from the committed state after an aborted transaction.", nil, nil)
	descFormatRefused = prometheus.NewDesc("eddy_format_refused_records_total", "Records dead-lettered by a registry format, by side: source (a value that did not decode with its writer's schema, or named an unknown one), sink (an output that did not fit the sink subject's schema).", []string{"side"}, nil)
	descRegistryUp    = prometheus.NewDesc("eddy_schema_registry_up", "1 when the node could ask the source's schema registry the last time it needed to, 0 while its tasks wait for it; absent without a registry format.", nil, nil)
	descRegistryDown  = prometheus.NewDesc("eddy_schema_registry_unavailable_total", "Times the node found the source's schema registry unavailable (each is followed by a wait and a retry).", nil, nil)
	descSyncTimeouts  = prometheus.NewDesc("eddy_table_sync_timeouts_total", "Times a task joining a co-partitioned table went on without a lagging input partition after waiting max_idle for it.", nil, nil)

	descStepIn       = prometheus.NewDesc("eddy_step_records_in_total", "Records into a step, over all tasks.", labelsStep, nil)
	descStepOut      = prometheus.NewDesc("eddy_step_records_out_total", "Records out of a step, over all tasks.", labelsStep, nil)
	descStepDropped  = prometheus.NewDesc("eddy_step_records_dropped_total", "Records of a map, filter or flat_map step that produced nothing (filtered out).", labelsStep, nil)
	descStepDead     = prometheus.NewDesc("eddy_step_dead_letter_records_total", "Records that failed at a step (sent to the dead-letter topic).", labelsStep, nil)
	descStepRebuilds = prometheus.NewDesc("eddy_step_instance_rebuilds_total", "Instances of a step's function rebuilt after a failure (trap, timeout, memory).", labelsStep, nil)
	descStepVersion  = prometheus.NewDesc("eddy_step_function_version", "The version of a step's live function (0 before the first deploy).", labelsStep, nil)
	descStepTimers   = prometheus.NewDesc("eddy_step_timers_fired_total", "Timers of a step that fired (eddy_timer calls' timers, those dead-lettered included).", labelsStep, nil)
	descStepTapped   = prometheus.NewDesc("eddy_step_tapped_records_total", "Records a step wrote to its to: topic (besides passing them on).", labelsStep, nil)
	descStepLost     = prometheus.NewDesc("eddy_window_results_dropped_total", "Window results of an aggregate step dropped because its function failed on them when no record asked for them (a corrupt accumulator).", labelsStep, nil)
	descStepCorrupt  = prometheus.NewDesc("eddy_corrupt_entries_total", "Entries a step read back that did not decode and were skipped, by kind: store (an entry of its state), progress (a progress marker of a repartition topic).", []string{"step", "kind"}, nil)

	descTasks        = prometheus.NewDesc("eddy_tasks", "Tasks the node runs (a stage on a partition).", nil, nil)
	descTaskIn       = prometheus.NewDesc("eddy_task_records_in_total", "Records a task took from its inputs (resets when the partition moves or the task is rebuilt).", labelsTask, nil)
	descTaskOut      = prometheus.NewDesc("eddy_task_records_out_total", "Records a task wrote to its output (resets when the partition moves or the task is rebuilt).", labelsTask, nil)
	descWatermark    = prometheus.NewDesc("eddy_watermark_seconds", "Event time (Unix seconds) a task's windows have reached; absent before its first record or without windows.", labelsTask, nil)
	descWatermarkLag = prometheus.NewDesc("eddy_watermark_delay_seconds", "Wall-clock time minus a task's watermark.", labelsTask, nil)
	descLag          = prometheus.NewDesc("eddy_consumer_lag_records", "Records of an input partition not processed yet, as of the last fetch.", labelsInput, nil)
	descOffset       = prometheus.NewDesc("eddy_consumer_offset", "The next offset of an input partition to process.", labelsInput, nil)

	descStateSize        = prometheus.NewDesc("eddy_state_size_bytes", "Size of the node's state database on disk, by part (lsm, value_log), as Badger last measured it (at open, then once a minute).", []string{"part"}, nil)
	descRestoresActive   = prometheus.NewDesc("eddy_restores_active", "Stores being restored from their changelog now.", nil, nil)
	descRestores         = prometheus.NewDesc("eddy_restores_total", "Store restores finished.", nil, nil)
	descRestoreRecords   = prometheus.NewDesc("eddy_restore_records_total", "Changelog records applied to stores by restores.", nil, nil)
	descRestoreRemaining = prometheus.NewDesc("eddy_restore_remaining_records", "Changelog records the active restores have still to read (at most; aborted records and markers count).", nil, nil)
	descStandbyLag       = prometheus.NewDesc("eddy_standby_lag_records", "Records of a changelog partition that this node's standby copy of the store has not applied yet (its stable end when last listed, minus the copy's position).", []string{"changelog", "partition"}, nil)
	descStandbyCopies    = prometheus.NewDesc("eddy_standby_copies", "Partition numbers of which this node keeps a standby copy.", nil, nil)
	descStandbyRecords   = prometheus.NewDesc("eddy_standby_records_total", "Changelog records this node's standby copies applied (catching up and following); not counted as restores.", nil, nil)
	descStandbyFailures  = prometheus.NewDesc("eddy_standby_failures_total", "Times a standby copy's following of its changelogs failed and started over.", nil, nil)
	descFenced           = prometheus.NewDesc("eddy_fenced_transactions_total", "Open transactions of nodes that left the group that this node aborted by fencing their transactional id (exactly_once).", nil, nil)
	descStateRebuilds    = prometheus.NewDesc("eddy_state_rebuilds_total", "Stores wiped and rebuilt from their changelog because their local checkpoint did not match it, by reason (changelog_replaced: the topic's id changed; changelog_behind: the changelog ends before the checkpoint; checkpoint_corrupt: the local checkpoint does not decode).", []string{"reason"}, nil)
)

// Describe implements prometheus.Collector.Describe.
func (nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIn, descOut, descDeadLettered, descLate, descOverload, descShadowOut,
		descShadowFailed, descCommits, descAborts, descBufRecords, descBufBytes, descSwaps, descTaskRebuilds, descSyncTimeouts, descRegRefused, descBadVersions,
		descFormatRefused, descRegistryUp, descRegistryDown,
		descStepIn, descStepOut, descStepDropped, descStepDead, descStepRebuilds, descStepVersion, descStepCorrupt, descStepLost, descStepTapped, descStepTimers,
		descTasks, descTaskIn, descTaskOut, descWatermark, descWatermarkLag, descLag, descOffset,
		descStateSize, descRestoresActive, descRestores, descRestoreRecords, descRestoreRemaining, descStateRebuilds,
		descStandbyLag, descStandbyCopies, descStandbyFailures, descStandbyRecords, descFenced} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.Collect.
func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	n, m := c.n, c.n.metrics
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		emit(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) { emit(d, prometheus.GaugeValue, v, labels...) }

	st := n.Stats()
	counter(descIn, st.In)
	counter(descOut, st.Out)
	counter(descDeadLettered, st.DeadLettered)
	counter(descLate, st.Late)
	counter(descOverload, st.Dropped)
	counter(descShadowOut, st.ShadowOut)
	counter(descShadowFailed, st.ShadowFailed)
	counter(descCommits, st.Commits)
	counter(descAborts, st.Aborts)
	gauge(descBufRecords, float64(st.BufferedRecords))
	gauge(descBufBytes, float64(st.BufferedBytes))
	counter(descSwaps, n.gen.Load())
	counter(descRegRefused, st.RegistryRefused)
	counter(descBadVersions, st.BadVersions)
	counter(descTaskRebuilds, m.taskRebuilds.Load())
	counter(descSyncTimeouts, m.syncTimeouts.Load())
	if f := n.formats; f != nil && (f.dec != nil || f.enc != nil) {
		counter(descFormatRefused, m.formatRefused[0].Load(), "source")
		counter(descFormatRefused, m.formatRefused[1].Load(), "sink")
	}
	if st := n.formats.status(); st != nil {
		up := 0.0
		if st.Up {
			up = 1
		}
		gauge(descRegistryUp, up)
		counter(descRegistryDown, n.formats.unavailable.Load())
	}

	versions := make([]int, len(n.p.Steps))
	n.fnMu.Lock()
	for i, lf := range n.cur {
		if lf != nil {
			versions[i] = lf.version
		}
	}
	n.fnMu.Unlock()
	for i, s := range n.p.Steps {
		sm := &m.steps[i]
		counter(descStepIn, sm.in.Load(), s.Name)
		counter(descStepOut, sm.out.Load(), s.Name)
		if s.Kind == StepMap || s.Kind == StepFilter || s.Kind == StepFlatMap {
			counter(descStepDropped, sm.dropped.Load(), s.Name)
		}
		counter(descStepDead, sm.deadLettered.Load(), s.Name)
		counter(descStepRebuilds, sm.rebuilds.Load(), s.Name)
		gauge(descStepVersion, float64(versions[i]), s.Name)
		if s.Kind == StepAggregate {
			counter(descStepLost, sm.lostResults.Load(), s.Name)
		}
		if s.To != "" {
			counter(descStepTapped, sm.tapped.Load(), s.Name)
		}
		if s.Timed() {
			counter(descStepTimers, sm.timersFired.Load(), s.Name)
		}
		for k := range nCorruptKinds {
			counter(descStepCorrupt, sm.corrupt[k].Load(), s.Name, k.String())
		}
	}

	tasks := n.taskStatuses()
	gauge(descTasks, float64(len(tasks)))
	now := time.Now()
	for _, ts := range tasks {
		stage, part := strconv.Itoa(ts.Stage), strconv.Itoa(int(ts.Partition))
		counter(descTaskIn, ts.In, stage, part)
		counter(descTaskOut, ts.Out, stage, part)
		if ts.Watermark != nil {
			wm := time.UnixMilli(*ts.Watermark)
			gauge(descWatermark, float64(*ts.Watermark)/1e3, stage, part)
			gauge(descWatermarkLag, now.Sub(wm).Seconds(), stage, part)
		}
		for _, in := range ts.Inputs {
			p := strconv.Itoa(int(in.Partition))
			gauge(descLag, float64(in.Lag), in.Topic, p)
			if in.Offset >= 0 {
				gauge(descOffset, float64(in.Offset), in.Topic, p)
			}
		}
	}

	if db := m.db.Load(); db != nil {
		lsm, vlog := db.Size()
		gauge(descStateSize, float64(lsm), "lsm")
		gauge(descStateSize, float64(vlog), "value_log")
	}
	gauge(descRestoresActive, float64(m.restores.active.Load()))
	counter(descRestores, m.restores.done.Load())
	counter(descRestoreRecords, m.restores.records.Load())
	gauge(descRestoreRemaining, float64(m.restores.remaining.Load()))
	for i, r := range rebuildReasons {
		counter(descStateRebuilds, m.stateRebuilds[i].Load(), r)
	}
	copies := map[int32]bool{}
	for _, sb := range n.standbyStatus() {
		copies[sb.Partition] = true
		gauge(descStandbyLag, float64(sb.Lag), sb.Changelog, strconv.Itoa(int(sb.Partition)))
	}
	gauge(descStandbyCopies, float64(len(copies)))
	counter(descStandbyFailures, m.standbyFailures.Load())
	counter(descStandbyRecords, m.standbyRecords.Load())
	counter(descFenced, m.fenced.Load())
}
