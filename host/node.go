package host

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
)

// NodeConfig configures a node.
type NodeConfig struct {
	Brokers []string
	// LookupEnv reads the environment variables that steps' config
	// secrets name. Default: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// NodeID distinguishes this node's transactional ID
	// (<pipeline>-<node id>) and, under Static, is its group instance id.
	// Default: hostname-pid, which changes at each start; a stable id kept
	// in the data directory comes from ClaimDataDir.
	NodeID string
	Logger *slog.Logger
	// Engine compiles the pipeline's functions; it is shared so that its
	// compilation cache is. Required.
	Engine *runtime.Engine
	// Static makes the node a static member of the consumer group (KIP-345)
	// with NodeID as its instance id: a node restarted with the same id
	// takes its partitions back at once, without a rebalance, which is what
	// an orchestrator that restarts crashed nodes wants. A static member that
	// stops does not leave the group: its partitions wait for the session
	// timeout (or its return). It needs a NodeID (ValidateNodeID).
	Static bool
	// SessionTimeout is how long the group waits for a silent node before
	// moving its partitions. Default 10s (Kafka's minimum is 6s).
	SessionTimeout time.Duration
	// StopTimeout bounds the calls of a clean stop that wait for the broker
	// (ending the open transaction, the final commit or checkpoint): after
	// it they give up, and Run returns an error wrapping ErrStopTimeout.
	// Closing the Kafka client (leaving the group, which waits for a join in
	// flight) has no context; Stage says when a stop waits for it, so
	// that a process can give up on it (eddy run --shutdown-timeout).
	// Default 30s.
	StopTimeout time.Duration
	// DataDir holds the node's state database (stateful steps). Required
	// when a step has state; an empty directory is restored from the
	// changelogs.
	DataDir string
	// Natives are Go functions that steps may name as "native:NAME"
	// instead of a .wasm file: they run through the same host paths as
	// guests, without the Wasm boundary (the baseline of benchmarks). Each
	// call of a factory makes one instance's function.
	Natives map[string]func() runtime.Native
	// RegistryTopic is the function registry's topic. Default
	// registry.DefaultTopic.
	RegistryTopic string
	// RegistryKey signs the registry events this node writes (deploys,
	// rollbacks, shadows) and verifies those of its pipeline before any
	// takes effect: registry.Key of the admin token, the same on every node
	// of the pipeline. Without it, unless UnsignedRegistry, the node
	// refuses every event of its pipeline (it runs the pipeline file's
	// modules) and every deploy.
	RegistryKey []byte
	// UnsignedRegistry makes the node take its pipeline's registry events
	// unverified, and write them unsigned when it has no RegistryKey: for
	// a registry topic only trusted clients can write (Kafka ACLs).
	UnsignedRegistry bool
	// PeerAllow are the networks of the peers this node sends peer calls
	// to (cluster status, state scans, forwarded keys): the addresses other
	// members of its group advertise, which anyone allowed to join the
	// group can choose. Default DefaultPeerAllow (loopback only); a
	// cluster of several machines lists its network, e.g. 10.0.0.0/8.
	PeerAllow []netip.Prefix
	// MaxRecordBytes is the largest record the node produces, as an upper
	// bound of its encoded size in a record batch (key, value, headers and
	// framing). Default DefaultMaxRecordBytes (1,000,012 bytes, franz-go's
	// default batch limit). A topic whose max.message.bytes is smaller, read
	// at start, has that limit instead. A record over its limit is not
	// produced: the input record it comes from is dead-lettered with code
	// output_too_large (outsize.go).
	MaxRecordBytes int
	// ClientOpts are added to the Kafka client's options (tests).
	ClientOpts []kgo.Opt
}

// Stats are a node's counters since it started.
type Stats struct {
	// In counts the records taken from the source topics, Out those
	// written to the sink.
	In           int64 `json:"in"`
	Out          int64 `json:"out"`
	DeadLettered int64 `json:"dead_lettered"`
	Dropped      int64 `json:"dropped"`
	Commits      int64 `json:"commits"`
	Aborts       int64 `json:"aborts"`
	// Late counts records later than their window's grace (sent to the
	// late topic).
	Late int64 `json:"late"`
	// ShadowOut counts records written to the shadow topic; ShadowFailed
	// the records a shadow failed on.
	ShadowOut    int64 `json:"shadow_out"`
	ShadowFailed int64 `json:"shadow_failed"`
	// BufferedRecords and BufferedBytes are fetched records not yet polled
	// (the Kafka client's buffer).
	BufferedRecords int64 `json:"buffered_records"`
	BufferedBytes   int64 `json:"buffered_bytes"`
	// RegistryRefused counts the registry records the node skipped
	// (malformed, or events not signed with its key); BadVersions the
	// registry versions of its steps that did not load (it kept or fell
	// back to an earlier one).
	RegistryRefused int64 `json:"registry_refused"`
	BadVersions     int64 `json:"bad_versions"`
}

type counters struct {
	in, out, deadLettered, dropped, commits, aborts, late atomic.Int64
	shadowOut, shadowFailed                               atomic.Int64
	// registryRefused counts registry records skipped (malformed,
	// unverified); badVersions registry versions that did not load.
	registryRefused, badVersions atomic.Int64
}

// Node runs one pipeline: it joins the pipeline's consumer group, runs a task
// per assigned partition and moves records from the source topics through the
// steps to the sink under the pipeline's delivery guarantee.
//
// Run it once; it returns when its context ends (after a clean shutdown) or
// on a fatal error.
type Node struct {
	p   *Pipeline
	cfg NodeConfig
	log *slog.Logger
	// cur are the steps' live function versions (nil for a key_by step on
	// a field); staged are new versions waiting for the next transaction
	// boundary (applySwaps). gen counts swaps: tasks compare it with theirs
	// before each batch. Guarded by fnMu.
	cur, staged []*liveFn
	// shadowCur and shadowStaged are the steps' shadows (shadow.go); a
	// staged liveFn without fn is a staged removal.
	shadowCur, shadowStaged []*liveFn
	fnMu                    sync.Mutex
	gen                     atomic.Int64
	reg                     *registryLog
	regReady                chan struct{} // closed once reg is open
	stopped                 chan struct{} // closed when Run returns
	started                 time.Time
	adminURL                string                  // see AdvertiseAdmin
	peerKey                 []byte                  // signs peer calls (admin.PeerKey); nil: none
	globals                 map[string]*globalTable // read by tasks, set before the group is joined
	stopGlobals             context.CancelFunc
	globalsDone             sync.WaitGroup
	pauses                  swapPauses
	retired                 chan retiredInst // instances replaced at swaps, closed by closeRetired
	// drv runs the tasks and takes what they make (driver.go): the node
	// itself, or InProcess.
	drv driver
	// checkpointing: stateful steps under at_least_once (checkpoint.go).
	checkpointing bool
	// timeFns are the steps' time_function modules (nil where none).
	timeFns []*runtime.Function
	// configs are the steps' config of the pipeline file, resolved
	// (ResolveConfig), secrets included: given to their functions, never
	// logged. A deploy may carry other config for its version
	// (versionConfig).
	configs []versionConfig
	// lookupEnv reads the environment variables secrets come from.
	lookupEnv func(string) (string, bool)
	stages    []Stage
	// emits and folds say, per step, whether it is an aggregate that emits
	// retractions or one that folds them (Pipeline.Retractions, retract.go).
	emits, folds []bool
	parts        int32 // partitions of the repartition and changelog topics
	// topicMax is the max.message.bytes of the topics the node writes, as
	// read at start (outsize.go); set before the client, then read-only.
	topicMax map[string]int
	// topicTimes are the record timestamps those topics accept, as read at
	// start (outsize.go); read-only after.
	topicTimes map[string]timeBounds
	stats      counters
	// progress is the node's view of each input partition (observe.go);
	// endsRead when refreshEnds last listed their ends (unix ns).
	progress progressMap
	endsRead atomic.Int64
	metrics  *metrics // metrics.go
	formats  *formats // formats.go: the source's and the sink's registry codecs

	cl   *kgo.Client
	sess *kgo.GroupTransactSession
	db   *state.DB // nil without stateful steps
	// rebuilds are the stores rebuilt because their checkpoint did not
	// match their changelog (changelog.go), for the status.
	rebuilds storeRebuilds
	// ckptMu serializes checkpoints (stateful at_least_once: checkpoint.go).
	ckptMu  sync.Mutex
	txnOpen bool // a transaction was begun and not yet ended (poll loop and shutdown only)
	// abortTxn is set by a task that gave a batch up (formats.go: the
	// schema registry could not be reached within half the transaction
	// timeout): the transaction then aborts, and its records come again.
	abortTxn atomic.Bool
	txnWork  bool // the open transaction got records to process (poll loop only)
	// listings counts the listings of input partitions' ends begun for
	// time synchronisation (timesync.go: fetchStamp, syncQueue.sure).
	listings atomic.Uint64
	// clientLoaded publishes cl to Stats, which may run on any goroutine.
	clientLoaded atomic.Pointer[kgo.Client]
	// clientReady is closed once Run has set cl: the client's group
	// callbacks may come before (awaitClient).
	clientReady chan struct{}

	fatal     chan error // first fatal error, from any goroutine
	fatalOnce sync.Once
	// room is signalled by a task when it takes a batch from its queue, to
	// wake a poll loop that holds a batch for a paused partition.
	room chan struct{}

	mu struct {
		sync.Mutex
		// tasks routes an assigned topic partition to its task; groups
		// holds each task once. A task serves partition p of every topic
		// of its stage (the balancer assigns them together).
		tasks  map[string]map[int32]*task
		groups map[taskKey]*task
		// restoring are tasks being made in the background (their stores
		// restoring, restore.go): not in tasks or groups until ready, their
		// partitions paused meanwhile.
		restoring map[taskKey]*pendingTask
	}
	// restoreSlots bounds the restores that run at once.
	restoreSlots chan struct{}
	// standbys are the node's standby copies (standby.go).
	standbys standbys
	fence    fencer
	// stage is what the node is doing while it starts or stops (Stage).
	stage atomic.Pointer[string]
	// closing is set when shutdown closes the Kafka client: its tasks are
	// stopped and its last commit is done (or gave up), so the revoke that
	// closing the client calls has nothing to commit.
	closing atomic.Bool
	runCtx  context.Context
	// workCtx is the tasks' context: it outlives runCtx until shutdown has
	// let them finish their batches (a clean stop commits their work).
	workCtx  context.Context
	stopWork context.CancelFunc
}

// NewNode loads the pipeline's functions (validating each module) and returns
// a node ready to Run.
func NewNode(ctx context.Context, p *Pipeline, cfg NodeConfig) (*Node, error) {
	if cfg.Engine == nil {
		return nil, errors.New("host: NodeConfig.Engine is required")
	}
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("host: no brokers")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	if cfg.RegistryTopic == "" {
		cfg.RegistryTopic = registry.DefaultTopic
	}
	if cfg.MaxRecordBytes == 0 {
		cfg.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if cfg.MaxRecordBytes < minRecordLimit || cfg.MaxRecordBytes > 1<<30 {
		return nil, fmt.Errorf("host: NodeConfig.MaxRecordBytes %d is outside [%d, %d]", cfg.MaxRecordBytes, minRecordLimit, 1<<30)
	}
	if cfg.Static && cfg.NodeID == "" {
		return nil, errors.New("host: static membership needs a NodeID")
	}
	if cfg.Static {
		if err := ValidateNodeID(cfg.NodeID); err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
	}
	if cfg.NodeID == "" {
		h, _ := os.Hostname()
		cfg.NodeID = h + "-" + strconv.Itoa(os.Getpid())
	}
	n := &Node{p: p, cfg: cfg, log: cfg.Logger.With("pipeline", p.Name, "node", cfg.NodeID), fatal: make(chan error, 1),
		room: make(chan struct{}, 1), checkpointing: checkpoints(p)}
	n.drv = kafkaDriver{n}
	n.mu.tasks = map[string]map[int32]*task{}
	n.mu.groups = map[taskKey]*task{}
	n.mu.restoring = map[taskKey]*pendingTask{}
	n.standbys.wake = make(chan struct{}, 1)
	n.fence.wake = make(chan struct{}, 1)
	n.restoreSlots = make(chan struct{}, restoreConcurrency)
	n.regReady = make(chan struct{})
	n.clientReady = make(chan struct{})
	n.retired = make(chan retiredInst, 64)
	n.stopped = make(chan struct{})
	n.started = time.Now().UTC()
	n.stages = p.Stages()
	n.emits, n.folds = p.Retractions()
	n.metrics = newMetrics(n)
	n.configs = make([]versionConfig, len(p.Steps))
	var err error
	if n.formats, err = newFormats(ctx, p); err != nil {
		return nil, err
	}
	n.lookupEnv = cfg.LookupEnv
	if n.lookupEnv == nil {
		n.lookupEnv = os.LookupEnv
	}
	for i := range p.Steps {
		vals, err := p.ResolveConfig(i, n.lookupEnv)
		if err != nil {
			return nil, err
		}
		n.configs[i] = versionConfig{entries: p.Steps[i].Config, values: vals, digest: p.ConfigDigest(i)}
	}
	load := func(i int, path string) (*runtime.Function, error) {
		if path == "" {
			return nil, nil
		}
		wasm, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return n.loadFunction(ctx, i, wasm, n.configs[i])
	}
	// A module that does not fit its step (checkFit) would dead-letter
	// every record: the node does not start with it.
	fits := func(path string, fn *runtime.Function, check func(*runtime.Function) error) error {
		if fn == nil {
			return nil
		}
		if err := check(fn); err != nil {
			return fmt.Errorf("%s does not fit the step: %w", path, err)
		}
		return nil
	}
	n.staged = make([]*liveFn, len(p.Steps))
	n.shadowCur = make([]*liveFn, len(p.Steps))
	n.shadowStaged = make([]*liveFn, len(p.Steps))
	for i, s := range p.Steps {
		var fn *runtime.Function
		var err error
		if name, ok := strings.CutPrefix(s.Function, NativePrefix); ok {
			fn, err = n.loadNative(i, name)
		} else {
			fn, err = load(i, p.FunctionPath(i))
		}
		if err == nil && fn == nil && s.Kind != StepKeyBy && s.Kind != StepJoin && s.Kind != stepOutput {
			err = errors.New("no function")
		}
		if err == nil {
			err = fits(s.Function, fn, func(fn *runtime.Function) error { return checkFit(s, fn) })
		}
		var lf *liveFn
		if fn != nil {
			lf = n.newLiveFn(fn, 0, n.configs[i])
		}
		n.cur = append(n.cur, lf)
		if err != nil {
			n.closeFunctions(ctx)
			return nil, fmt.Errorf("step %s: %w", s.Name, err)
		}
		tfn, err := load(i, p.TimeFunctionPath(i))
		if err == nil {
			err = fits(s.TimeFunction, tfn, checkTimeFit)
		}
		n.timeFns = append(n.timeFns, tfn)
		if err != nil {
			n.closeFunctions(ctx)
			return nil, fmt.Errorf("step %s: time_function: %w", s.Name, err)
		}
	}
	return n, nil
}

func (n *Node) closeFunctions(ctx context.Context) {
	n.fnMu.Lock()
	defer n.fnMu.Unlock()
	for _, lfs := range [][]*liveFn{n.cur, n.staged, n.shadowCur, n.shadowStaged} {
		for _, lf := range lfs {
			if lf != nil && lf.fn != nil {
				lf.fn.Close(context.WithoutCancel(ctx))
			}
		}
	}
	for _, f := range n.timeFns {
		if f != nil {
			f.Close(context.WithoutCancel(ctx))
		}
	}
}

// stageIndex returns the index of the stage that consumes topic.
func (n *Node) stageIndex(topic string) int {
	for i, st := range n.stages {
		if slices.Contains(st.Inputs, topic) {
			return i
		}
	}
	return 0
}

// taskKey names a task: a stage and a partition number.
type taskKey struct {
	stage int
	part  int32
}

// inputs returns every topic the node consumes: the source topics and the
// repartition topics.
func (n *Node) inputs() []string {
	var ts []string
	for _, st := range n.stages {
		ts = append(ts, st.Inputs...)
	}
	return ts
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	st := Stats{In: n.stats.in.Load(), Out: n.stats.out.Load(), DeadLettered: n.stats.deadLettered.Load(),
		Dropped: n.stats.dropped.Load(), Commits: n.stats.commits.Load(), Aborts: n.stats.aborts.Load(), Late: n.stats.late.Load(),
		ShadowOut: n.stats.shadowOut.Load(), ShadowFailed: n.stats.shadowFailed.Load(),
		RegistryRefused: n.stats.registryRefused.Load(), BadVersions: n.stats.badVersions.Load()}
	if cl := n.clientLoaded.Load(); cl != nil {
		st.BufferedRecords, st.BufferedBytes = cl.BufferedFetchRecords(), cl.BufferedFetchBytes()
	}
	return st
}

func (n *Node) client() *kgo.Client { return n.cl }

// fail records a fatal error; Run returns it.
func (n *Node) fail(err error) {
	n.fatalOnce.Do(func() { n.fatal <- err })
}

func (n *Node) clientOpts() []kgo.Opt {
	p := n.p
	start := kgo.NewOffset().AtStart()
	if p.Source.Start == "latest" {
		start = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(n.cfg.Brokers...),
		kgo.ClientID("eddy-" + n.cfg.NodeID),
		kgo.ConsumerGroup(p.Name),
		kgo.ConsumeTopics(n.inputs()...),
		kgo.Balancers(n.balancer()),
		kgo.ConsumeResetOffset(start),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Transaction markers come through (dispatch drops them): they
		// tell how far the node has read (observe.go).
		kgo.KeepControlRecords(),
		// Fetched data is the node's largest buffer. The limits count
		// compressed bytes, and batches of similar records compress tenfold
		// or more, so they are kept small: memory stays bounded by them, not
		// by the backlog.
		kgo.FetchMaxBytes(2 << 20),
		kgo.FetchMaxPartitionBytes(512 << 10),
		kgo.MaxConcurrentFetches(1),
		// A resumed partition joins the next fetch only after the one in
		// flight returns, which waits up to FetchMaxWait when there is no
		// new data: keep it short so pausing costs little.
		kgo.FetchMaxWait(50 * time.Millisecond),
		kgo.AllowAutoTopicCreation(),
		kgo.OnPartitionsAssigned(n.assigned),
		kgo.OnPartitionsRevoked(n.revoked),
		kgo.OnPartitionsLost(n.lost),
		kgo.AdjustFetchOffsetsFn(n.adjustOffsets),
		kgo.ProducerLinger(time.Millisecond),
		kgo.RecordPartitioner(newPartitioner()),
		kgo.ProducerBatchMaxBytesFn(func(topic string) int32 { return int32(n.recordLimit(topic)) }),
		kgo.SessionTimeout(n.cfg.SessionTimeout),
		kgo.HeartbeatInterval(max(n.cfg.SessionTimeout/10, 100*time.Millisecond)),
	}
	if n.cfg.Static {
		opts = append(opts, kgo.InstanceID(n.cfg.NodeID))
	}
	opts = append(opts, kgo.WithLogger(kgoLogger{n.log}))
	if slices.ContainsFunc(n.stages, func(st Stage) bool { return newTimeSync(p, st) != nil }) {
		opts = append(opts, kgo.WithHooks(&fetchStamp{listings: &n.listings}))
	}
	switch p.Delivery {
	case ExactlyOnce:
		opts = append(opts,
			kgo.TransactionalID(p.Name+"-"+n.cfg.NodeID),
			kgo.TransactionTimeout(transactionTimeout(p)),
			kgo.RequireStableFetchOffsets())
	case AtLeastOnce:
		opts = append(opts, kgo.AutoCommitMarks(), kgo.AutoCommitInterval(max(p.CommitInterval, 100*time.Millisecond)))
	case AtMostOnce:
		opts = append(opts, kgo.DisableAutoCommit())
	}
	return append(opts, n.cfg.ClientOpts...)
}

// ErrStopTimeout is returned by Run when a clean stop took longer than
// NodeConfig.StopTimeout; the error says what the node was waiting for.
var ErrStopTimeout = errors.New("clean stop timed out")

// Stage says what the node is doing while it starts or stops ("reading the
// function registry", "ending the open transaction", "closing the Kafka
// client ..."), or "" while it runs. It is safe to call at any time: a
// process whose node does not stop in time reports it.
func (n *Node) Stage() string {
	if s := n.stage.Load(); s != nil {
		return *s
	}
	return ""
}

func (n *Node) setStage(s string) {
	n.stage.Store(&s)
	if s != "" {
		n.log.Debug("node: " + s)
	}
}

// Run runs the node until ctx ends or a fatal error. A node stopped by ctx,
// even while it is still starting, returns nil, unless the stop took longer
// than NodeConfig.StopTimeout (ErrStopTimeout).
func (n *Node) Run(ctx context.Context) (err error) {
	defer close(n.stopped)
	defer n.closeFunctions(ctx)
	defer func() {
		if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
			err = nil
		}
	}()
	n.runCtx = ctx
	n.workCtx, n.stopWork = context.WithCancel(context.WithoutCancel(ctx))
	defer n.stopWork()
	defer n.setStage("closing the functions")
	n.setStage("creating topics")
	if err := n.createTopics(ctx); err != nil {
		return err
	}
	n.learnTopicLimits(ctx)
	if n.stateful() && n.cfg.DataDir == "" {
		return errors.New("host: a stateful step needs NodeConfig.DataDir")
	}
	if n.stateful() {
		// A stateless node opens no database (several may share a
		// directory); it reads the registry into memory at each start.
		n.setStage("opening the state store")
		if n.db, err = state.Open(n.cfg.DataDir, state.Options{Logger: n.log}); err != nil {
			return err
		}
		defer func() {
			n.setStage("closing the state store")
			n.db.Close()
		}()
		n.metrics.db.Store(n.db)
	}
	if n.cfg.RegistryKey == nil && !n.cfg.UnsignedRegistry {
		n.log.Warn("registry: no key (no admin token): this node refuses every registry event of its pipeline and runs the pipeline file's modules; give it the admin token")
	}
	n.setStage("reading the function registry")
	if n.reg, err = openRegistry(ctx, n.cfg.Brokers, n.cfg.RegistryTopic, n.db, n.log,
		registryTrust{pipeline: n.p.Name, key: n.cfg.RegistryKey, unsigned: n.cfg.UnsignedRegistry, refused: &n.stats.registryRefused}); err != nil {
		return err
	}
	defer n.reg.close()
	n.setStage("waiting for a reset of the pipeline to finish")
	if err := n.awaitReset(ctx); err != nil { // reset.go
		return err
	}
	n.setStage("loading the registry's function versions")
	if err := n.useRegistry(ctx); err != nil {
		return err
	}
	n.setStage("loading global tables")
	if err := n.openGlobals(ctx); err != nil {
		return err
	}
	defer n.closeGlobals()
	closerDone := make(chan struct{})
	go func() {
		defer close(closerDone)
		n.closeRetired(context.WithoutCancel(ctx))
	}()
	defer func() {
		close(n.retired)
		<-closerDone
	}()
	n.reg.onEvent = n.watchResets(n.onRegistryEvent)
	close(n.regReady)
	rctx, stopRegistry := context.WithCancel(ctx)
	tailDone := make(chan struct{})
	go func() {
		defer close(tailDone)
		n.reg.run(rctx)
	}()
	defer func() {
		n.setStage("stopping the registry reader")
		stopRegistry()
		<-tailDone
	}()
	if n.p.Delivery == ExactlyOnce {
		// Before the client: its first assignment may wait for the
		// fencing goroutine (awaitFence).
		n.startFencer(ctx)
		defer n.stopFencer()
		n.sess, err = kgo.NewGroupTransactSession(n.clientOpts()...)
		if err == nil {
			n.cl = n.sess.Client()
		}
	} else {
		n.cl, err = kgo.NewClient(n.clientOpts()...)
	}
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	n.clientLoaded.Store(n.cl)
	close(n.clientReady)
	if n.db != nil {
		n.startStandbys(ctx)
	}
	n.log.Info("node started", "delivery", n.p.Delivery, "topics", n.p.Source.Topics, "sink", n.p.Sink.Topic)
	n.setStage("")
	runErr := n.loop(ctx)
	stopErr := n.shutdown(runErr)
	if runErr != nil && ctx.Err() == nil {
		return runErr
	}
	return stopErr
}

// loop polls, dispatches batches to tasks and ends transactions.
func (n *Node) loop(ctx context.Context) error {
	eos := n.p.Delivery == ExactlyOnce
	txnStart := time.Time{}
	lastCkpt := time.Now()
	for {
		select {
		case err := <-n.fatal:
			return err
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if !eos || txnStart.IsZero() {
			// Between transactions: new function versions take over here.
			n.applySwaps(ctx)
		}
		if eos && txnStart.IsZero() {
			if err := n.sess.Begin(); err != nil {
				return fmt.Errorf("begin transaction: %w", err)
			}
			n.txnOpen = true
			txnStart = time.Now()
		}
		// Poll at most until the next commit is due.
		wait := n.p.CommitInterval
		switch {
		case eos:
			wait = max(time.Millisecond, n.p.CommitInterval-time.Since(txnStart))
		case n.checkpointing:
			wait = max(time.Millisecond, n.p.CommitInterval-time.Since(lastCkpt))
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		if n.holding() {
			// A held batch waits for room in its task's queue: stop polling
			// as soon as a task takes a batch.
			go func() {
				select {
				case <-n.room:
					cancel()
				case <-pctx.Done():
				}
			}()
		}
		var fetches kgo.Fetches
		if eos {
			fetches = n.sess.PollRecords(pctx, n.pollSize())
		} else {
			fetches = n.cl.PollRecords(pctx, n.pollSize())
		}
		cancel()
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return
			}
			n.log.Warn("fetch error", "topic", t, "partition", p, "error", err)
			if errors.Is(err, kgo.ErrClientClosed) {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		if eos && !n.txnWork {
			// Nothing is processed in this transaction yet: a version
			// staged meanwhile takes over now, for every record of it.
			n.applySwaps(ctx)
		}
		if n.p.Delivery == AtMostOnce && fetches.NumRecords() > 0 {
			// Commit before processing: a crash loses these records rather
			// than produce their output twice.
			if err := n.cl.CommitRecords(ctx, fetches.Records()...); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			n.stats.commits.Add(1)
		}
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			n.progress.get(fp.Topic, fp.Partition).end.Store(fp.LastStableOffset)
			if len(fp.Records) > 0 {
				n.dispatch(ctx, fp)
			}
		})
		n.releaseAllSync(ctx)
		n.flushHeld(ctx)
		n.tickTimers(time.Now())
		if n.checkpointing && time.Since(lastCkpt) >= n.p.CommitInterval {
			if err := n.checkpoint(ctx); err != nil {
				return err
			}
			lastCkpt = time.Now()
		}
		if eos && time.Since(txnStart) >= n.p.CommitInterval {
			end := n.endTransaction
			if !n.txnWork {
				end = n.endIdleTransaction
			}
			if err := end(ctx, kgo.TryCommit); err != nil {
				return err
			}
			txnStart, n.txnWork = time.Time{}, false
		}
	}
}

// holding reports whether a batch is held for a paused partition.
func (n *Node) holding() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range n.mu.groups {
		if len(t.held) > 0 {
			return true
		}
	}
	return false
}

func (n *Node) stateful() bool {
	for _, s := range n.p.Steps {
		if s.Stateful() {
			return true
		}
	}
	return false
}

// createTopics creates the topics the node writes besides the sink: the
// changelogs (compacted) and the repartition topics, each with as many
// partitions as the largest source topic, so that every task of every stage
// has its partition.
func (n *Node) createTopics(ctx context.Context) error {
	var repartitions []string
	changelogs := changelogTopics(n.p)
	sides := false
	for _, st := range n.stages {
		if !st.Last {
			repartitions = append(repartitions, st.Output)
		}
		sides = sides || len(st.Sides) > 0
	}
	if len(changelogs)+len(repartitions) == 0 && !sides {
		return nil
	}
	parts, err := PartitionCount(ctx, n.cfg.Brokers, n.p.Source.Topics...)
	if err != nil {
		return err
	}
	n.parts = parts
	if err := CreateCompactedTopics(ctx, n.cfg.Brokers, parts, changelogs...); err != nil {
		return fmt.Errorf("changelog topics: %w", err)
	}
	if err := CreateTopics(ctx, n.cfg.Brokers, parts, repartitions...); err != nil {
		return fmt.Errorf("repartition topics: %w", err)
	}
	return n.checkCopartitioned(ctx)
}

// checkCopartitioned checks that a join's other input (a table that is not
// global, the other stream) has as many partitions as the stream it joins:
// a task joins partition p of both, so each key must be in the same
// partition number on both sides.
func (n *Node) checkCopartitioned(ctx context.Context) error {
	for _, st := range n.stages {
		for topic, s := range st.Sides {
			other, err := PartitionCount(ctx, n.cfg.Brokers, topic)
			if err != nil {
				return fmt.Errorf("step %s: %w", n.p.Steps[s].Name, err)
			}
			for _, in := range st.Inputs {
				if _, side := st.Sides[in]; side {
					continue
				}
				mine := n.parts
				if slices.Contains(n.p.Source.Topics, in) {
					if mine, err = PartitionCount(ctx, n.cfg.Brokers, in); err != nil {
						return err
					}
				}
				if mine != other {
					what := "stream"
					if n.p.Steps[s].Table != "" {
						what = "table " + n.p.Steps[s].Table + ", topic"
					}
					return fmt.Errorf("step %s joins %s %s (%d partitions) with %s (%d partitions): a join reads partition p of both, "+
						"so they must be co-partitioned — the same partition count, and records keyed and partitioned the same way "+
						"(repartition one side with a key_by step, or make a table global: true)",
						n.p.Steps[s].Name, what, topic, other, in, mine)
				}
			}
		}
	}
	return nil
}

// pollSize is how many records one poll may return: a batch per partition.
func (n *Node) pollSize() int {
	n.mu.Lock()
	parts := 0
	for _, ps := range n.mu.tasks {
		parts += len(ps)
	}
	n.mu.Unlock()
	return n.p.BatchSize * max(1, parts)
}

// dispatch queues a partition's fetched records on its task, in batches.
// When the task's queue is full: with overload "block" the partition is
// paused and the batch held until there is room; "drop" and "sample" shed
// load instead, counting what they drop.
//
// It holds n.mu throughout, so a task cannot be stopped (and its queue
// closed) while a batch is being sent to it; held batches are guarded by
// n.mu too.
func (n *Node) dispatch(ctx context.Context, fp kgo.FetchTopicPartition) {
	if n.dispatchLocked(ctx, fp) {
		// Its task is still restoring, its partition paused; these were
		// fetched before the pause took effect. They are fetched again
		// once it is ready, not committed past. (Not under n.mu: the
		// client takes its own locks, which its group goroutine may hold
		// while it calls the node back.)
		n.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{
			fp.Topic: {fp.Partition: {Epoch: -1, Offset: fp.Records[0].Offset}}})
	}
}

// dispatchLocked is dispatch under n.mu; it reports whether the records
// belong to a task still restoring.
func (n *Node) dispatchLocked(ctx context.Context, fp kgo.FetchTopicPartition) (restoring bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.mu.tasks[fp.Topic][fp.Partition]
	if t == nil {
		// Revoked meanwhile (the next owner fetches these again), or
		// restoring.
		return n.mu.restoring[taskKey{stage: n.stageIndex(fp.Topic), part: fp.Partition}] != nil
	}
	recs := n.dropControl(fp)
	if len(recs) > 0 {
		// Records queued for time synchronisation count too: the
		// transaction must commit their partition's offset moved back
		// to them (rewindSync), not abort back past what was processed.
		n.txnWork = true
	}
	if t.sync != nil && n.addSync(t, fp, recs) {
		return false // releaseAllSync hands them over in time order
	}
	n.enqueue(ctx, t, fp.Topic, recs)
	return false
}

// enqueue queues records of one partition of topic on t, in batches (see
// dispatch). n.mu must be held.
func (n *Node) enqueue(ctx context.Context, t *task, topic string, recs []*kgo.Record) {
	for len(recs) > 0 {
		k := min(len(recs), n.p.BatchSize)
		b := &batch{records: recs[:k], last: recs[k-1]}
		recs = recs[k:]
		if h := len(t.held); h > 0 && t.held[h-1].records[0].Topic == topic {
			// The partition is paused; records fetched before the pause took
			// effect join the held batch.
			t.held[h-1].records = append(t.held[h-1].records, b.records...)
			t.held[h-1].last = b.last
			continue
		}
		t.admit(b)
		if len(t.held) == 0 {
			select {
			case t.in <- b:
				continue
			default:
			}
		}
		switch n.p.Limits.Overload {
		case OverloadDrop, OverloadSample:
			n.shed(ctx, t, b)
		default:
			// Batches keep their order: behind a held batch, a batch of
			// another topic of the task is held too.
			t.held = append(t.held, b)
			n.pauseFetch(t, topic)
		}
	}
}

// shed drops (or, for "sample", keeps a sample of) a batch that found the
// queue full.
func (n *Node) shed(ctx context.Context, t *task, b *batch) {
	topic := b.records[0].Topic
	if n.p.Limits.Overload == OverloadSample {
		kept := b.records[:0:0]
		for _, r := range b.records {
			h := fnv.New32a()
			fmt.Fprintf(h, "%s/%d/%d", r.Topic, r.Partition, r.Offset)
			if float64(h.Sum32())/float64(1<<32) < n.p.Limits.SampleRate {
				kept = append(kept, r)
			}
		}
		dropped := len(b.records) - len(kept)
		n.stats.dropped.Add(int64(dropped))
		n.log.Warn("overloaded: sampled a batch", "topic", topic, "partition", t.part, "kept", len(kept), "dropped", dropped)
		if len(kept) > 0 {
			// The kept records wait for room: sampling sheds load, it does
			// not skip the queue.
			b.records = kept
			select {
			case t.in <- b:
			case <-ctx.Done():
			}
			return
		}
	} else {
		n.stats.dropped.Add(int64(len(b.records)))
		n.log.Warn("overloaded: dropped a batch", "topic", topic, "partition", t.part, "records", len(b.records))
	}
	t.settle(b)
	close(b.done)
}

// flushHeld queues held batches whose task has room again and resumes their
// partitions.
func (n *Node) flushHeld(ctx context.Context) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range n.mu.groups {
	queue:
		for len(t.held) > 0 {
			select {
			case t.in <- t.held[0]:
				topic := t.held[0].records[0].Topic
				t.held = t.held[1:]
				n.fetchGate(t, topic)
			default:
				break queue
			}
		}
	}
}

// drainTasks waits until every task has processed its queue and every
// produced record is acknowledged (the barrier before a transaction ends).
func (n *Node) drainTasks(ctx context.Context) error {
	for {
		n.flushHeld(ctx)
		if err := n.cl.Flush(ctx); err != nil {
			return err
		}
		n.mu.Lock()
		idle := true
		for _, t := range n.mu.groups {
			if len(t.held) > 0 || !t.idle() {
				idle = false
			}
		}
		n.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case err := <-n.fatal:
			// Put back for the poll loop, which stops on it; n.fail would
			// not (it sends once), and the node would wait on work that
			// never settles.
			n.fatal <- err
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// transactionTimeout is how long the broker lets a transaction of p's
// nodes stay open before it aborts it.
func transactionTimeout(p *Pipeline) time.Duration { return max(10*time.Second, 10*p.CommitInterval) }

// endIdleTransaction ends a transaction that got no records: nothing was
// produced or consumed in it, so there is nothing to commit. It is aborted,
// which the client does at once (committing a transaction without offsets
// holds the client for 500 ms against a rebalance race, and an idle node
// ends one every commit interval).
func (n *Node) endIdleTransaction(ctx context.Context, _ kgo.TransactionEndTry) error {
	_, err := n.sess.End(ctx, kgo.TryAbort)
	n.txnOpen = false
	if err != nil {
		return n.endError(err)
	}
	return nil
}

// ErrFenced is wrapped by the error Run returns when the node's producer
// was fenced: another producer took its transactional id, or the broker
// aborted its transaction at the transaction timeout. The node cannot go
// on under that producer; a new node on the same data directory can
// (eddy run starts one).
var ErrFenced = errors.New("producer fenced")

// IsFenced reports whether err says the node's producer was fenced.
func IsFenced(err error) bool {
	return errors.Is(err, ErrFenced) || errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// fencedError is a transaction's end refused because the producer was
// fenced: its message says why that may be.
type fencedError struct {
	err error
	msg string
}

func (e *fencedError) Error() string   { return e.msg }
func (e *fencedError) Unwrap() []error { return []error{e.err, ErrFenced} }

// endError is the error of a transaction's end that failed. A fenced
// producer says why it may have been fenced.
func (n *Node) endError(err error) error {
	if IsFenced(err) {
		return &fencedError{err: err, msg: fmt.Sprintf("end transaction: %v (this node's transactional id %s-%s was fenced: it "+
			"left the group, cut off or stalled past the session timeout, and the node that took its partitions aborted its open "+
			"transaction, or the transaction timeout did; or a second node runs with node id %s. What it had not committed is "+
			"processed by the others)", err, n.p.Name, n.cfg.NodeID, n.cfg.NodeID)}
	}
	return fmt.Errorf("end transaction: %w", err)
}

// endTransaction waits for all work of the transaction, then commits it with
// the consumed offsets (or aborts: the session then rewinds to the committed
// offsets and the records are processed again).
func (n *Node) endTransaction(ctx context.Context, try kgo.TransactionEndTry) error {
	began := time.Now()
	if err := n.drainTasks(ctx); err != nil {
		if errors.Is(err, context.Canceled) && errors.Is(ctx.Err(), context.Canceled) {
			// Told to stop while the poll loop waits for the work: the
			// transaction stays open and the stop (shutdown) waits for
			// the work with a context of its own and commits it, or
			// aborts it if the stop is not clean. Aborting here would
			// throw away a transaction that a clean stop can finish.
			return fmt.Errorf("end transaction: %w", err)
		}
		try = kgo.TryAbort
		if errors.Is(err, context.Canceled) {
			ctx = context.WithoutCancel(ctx)
		}
	}
	if n.abortTxn.Swap(false) {
		try = kgo.TryAbort
	}
	if try == kgo.TryCommit {
		n.rewindSync()
		n.logChanges(ctx, n.allTasks(), nil)
	}
	committed, err := n.sess.End(ctx, try)
	n.txnOpen = false
	if serr := n.settleStores(n.allTasks(), committed && err == nil); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return n.endError(err)
	}
	if committed {
		n.stats.commits.Add(1)
		n.metrics.commit.Observe(time.Since(began).Seconds())
	} else {
		n.stats.aborts.Add(1)
		n.log.Info("transaction aborted; records will be processed again")
		if n.stateful() && ctx.Err() == nil && n.runCtx.Err() == nil { // not when stopping
			return n.rebuildTasks(ctx)
		}
	}
	return nil
}

// rebuildTasks replaces every task with a new one restored from the
// committed state. After an aborted transaction the stores drop their
// pending changes, but what tasks keep in memory beside them (window and
// join indexes, watermarks, caches) may still reflect the aborted records,
// which the session is about to deliver again.
func (n *Node) rebuildTasks(ctx context.Context) error {
	n.mu.Lock()
	old := map[taskKey]*task{}
	for k, t := range n.mu.groups {
		old[k] = t
	}
	n.mu.Unlock()
	for _, t := range old {
		t.stop(false)
	}
	var keys []taskKey
	n.mu.Lock()
	for k, t := range old {
		// Held and time-sync queued records are fetched again (the
		// session rewinds to the committed offsets): resume their
		// partitions.
		t.held, t.sync = nil, nil
		for _, in := range t.stage.Inputs {
			n.fetchGate(t, in)
		}
		if n.mu.groups[k] == t {
			keys = append(keys, k) // not revoked meanwhile
		}
	}
	n.mu.Unlock()
	// The new tasks restore their stores outside n.mu: status, metrics
	// and the admin API do not wait on a restore. Only this goroutine (the
	// poll loop) dispatches records, so none reaches a task meanwhile.
	made, err := n.makeTasks(keys)
	if err != nil {
		return fmt.Errorf("rebuilding tasks after an abort: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var rebuilt []*task
	for k, nt := range made {
		t := old[k]
		if n.mu.groups[k] != t {
			nt.stop(false) // revoked meanwhile
			continue
		}
		rebuilt = append(rebuilt, nt)
		n.mu.groups[k] = nt
		for _, in := range nt.stage.Inputs {
			if n.mu.tasks[in][k.part] == t {
				n.mu.tasks[in][k.part] = nt
			}
		}
	}
	n.startSync(rebuilt)
	n.metrics.taskRebuilds.Add(int64(len(old)))
	n.log.Info("tasks rebuilt from the committed state", "tasks", len(old))
	return nil
}

// makeTasks makes the tasks of keys, restoring their stores; it holds no
// lock of the node. On an error it stops the tasks it made and returns the
// error.
func (n *Node) makeTasks(keys []taskKey) (map[taskKey]*task, error) {
	made := map[taskKey]*task{}
	for _, k := range keys {
		t, err := n.newTask(n.runCtx, k)
		if err != nil {
			for _, t := range made {
				t.stop(false)
			}
			return nil, fmt.Errorf("task %d/%d: %w", k.stage, k.part, err)
		}
		made[k] = t
	}
	return made, nil
}

// assigned makes the tasks of newly assigned partitions. A task whose
// stores must be restored from their changelogs is made in the background
// (restoreInBackground): its partitions are paused until it is ready, and
// assigned returns at once, so that the group goroutine (heartbeats, the
// next rebalance) and the poll loop (the node's other partitions) never
// wait for a restore. Tasks without stores to restore, and tasks that join
// a co-partitioned table (whose table restores up to the group's offsets in
// adjustOffsets, which runs after assigned), are made here, outside n.mu,
// so that status and metrics never wait on them either. franz-go calls
// assigned, revoked and lost one at a time, and starts fetching the new
// partitions after assigned returns.
func (n *Node) assigned(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
	if !n.awaitClient(ctx) {
		return
	}
	var now, later []taskKey
	topics := map[taskKey][]string{}
	n.mu.Lock()
	for topic, ps := range parts {
		for _, p := range ps {
			k := taskKey{stage: n.stageIndex(topic), part: p}
			topics[k] = append(topics[k], topic)
			if n.mu.groups[k] != nil || n.mu.restoring[k] != nil || slices.Contains(now, k) || slices.Contains(later, k) {
				continue
			}
			if n.restoresInBackground(k.stage) {
				later = append(later, k)
			} else {
				now = append(now, k)
			}
		}
	}
	for _, k := range later {
		n.restoreInBackground(cl, k, topics[k])
	}
	n.mu.Unlock()
	for _, k := range now {
		n.stopStandby(k.part)
	}
	if len(topics) > 0 {
		// Before the client fetches the new partitions' offsets: a
		// departed node's open transaction that holds them is fenced
		// first (fence.go).
		n.awaitFence(ctx)
	}
	made, err := n.makeTasks(now)
	if err != nil {
		n.fail(err)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, t := range made {
		n.publishTask(t, topics[k])
	}
	for k, ts := range topics {
		if t := n.mu.groups[k]; t != nil {
			n.publishTask(t, ts) // assigned again while it ran: its topics, again
		}
	}
	n.log.Info("partitions assigned", "partitions", parts, "restoring", len(later))
}

// awaitClient waits until Run has set n.cl, or ctx ends (false). The
// client's group callbacks call it first: franz-go may join the group and
// assign partitions before the constructor that made the client returns.
func (n *Node) awaitClient(ctx context.Context) bool {
	select {
	case <-n.clientReady:
		return true
	case <-ctx.Done():
		return false
	}
}

// publishTask makes t the task of its partition of topics. n.mu must be held.
func (n *Node) publishTask(t *task, topics []string) {
	n.mu.groups[t.key] = t
	for _, topic := range topics {
		if n.mu.tasks[topic] == nil {
			n.mu.tasks[topic] = map[int32]*task{}
		}
		n.mu.tasks[topic][t.part] = t
	}
}

// revoked stops the tasks of revoked partitions. Under at_least_once they
// finish their queued batches and the marked offsets are committed before
// the partitions move; under exactly_once the open transaction is aborted by
// the session, so queued work is dropped.
func (n *Node) revoked(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
	if !n.awaitClient(ctx) {
		return
	}
	if n.closing.Load() {
		// Closing the client revokes everything; committing again here,
		// with the client's context, would wait without bound for a broker
		// that did not answer the stop's own commit.
		return
	}
	if n.checkpointing {
		if err := n.checkpointRevoked(ctx, parts); err != nil {
			n.log.Warn("checkpoint on revoke failed", "error", err)
		}
		n.log.Info("partitions revoked", "partitions", parts)
		n.wakeStandbys()
		return
	}
	drain := n.p.Delivery != ExactlyOnce
	n.stopTasks(parts, drain)
	if n.p.Delivery == AtLeastOnce {
		if err := cl.Flush(ctx); err == nil {
			if err := cl.CommitMarkedOffsets(ctx); err != nil {
				n.log.Warn("commit on revoke failed", "error", err)
			}
		}
	}
	n.log.Info("partitions revoked", "partitions", parts)
	n.wakeStandbys() // a number it processed may be one it copies now
}

func (n *Node) lost(ctx context.Context, _ *kgo.Client, parts map[string][]int32) {
	if !n.awaitClient(ctx) {
		return
	}
	n.stopTasks(parts, false)
	n.log.Warn("partitions lost", "partitions", parts)
	n.wakeStandbys()
}

// stopTasks stops the tasks of parts (see task.stop) and returns them.
func (n *Node) stopTasks(parts map[string][]int32, drain bool) []*task {
	n.mu.Lock()
	var ts []*task
	var held [][]*batch
	for topic, ps := range parts {
		for _, p := range ps {
			t := n.mu.tasks[topic][p]
			if t == nil {
				continue
			}
			// The task stops with its first revoked topic; it forgets the
			// others (the balancer moves them together).
			for _, in := range t.stage.Inputs {
				delete(n.mu.tasks[in], p)
			}
			delete(n.mu.groups, t.key)
			ts = append(ts, t)
			held = append(held, t.held)
			// A pause outlives the assignment in the client: were the
			// partition assigned here again, it would never be fetched.
			t.held, t.sync = nil, nil
			for _, in := range t.stage.Inputs {
				n.fetchGate(t, in)
			}
		}
	}
	pending := n.cancelRestores(parts)
	n.mu.Unlock()
	for _, pt := range pending {
		<-pt.done // its store is no longer written
	}
	for i, t := range ts {
		if drain {
			for _, b := range held[i] {
				t.in <- b // the queue drains as the task runs
			}
		}
		t.stop(drain)
	}
	return ts
}

// shutdown finishes or aborts the open work, commits, leaves the group and
// closes the client.
//
// The calls that wait for the broker share one deadline, StopTimeout: past
// it, shutdown goes on without them (the open transaction is left to the
// broker's transaction timeout, uncommitted offsets are processed again)
// and returns an ErrStopTimeout naming the first step that ran out of time.
func (n *Node) shutdown(cause error) (stopErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.StopTimeout)
	defer cancel()
	// timedOut records the first step that ran out of time.
	timedOut := func(err error) {
		if err != nil && stopErr == nil && ctx.Err() == context.DeadlineExceeded {
			stopErr = fmt.Errorf("%w after %s: %s: %w", ErrStopTimeout, n.cfg.StopTimeout, n.Stage(), err)
		}
	}
	// The loop returns its context's error when asked to stop: that is a
	// clean stop, whether cancelled or timed out.
	clean := cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded)
	if !clean {
		n.stopWork() // the open work is abandoned: stop guest calls and produces
	}
	switch n.p.Delivery {
	case ExactlyOnce:
		try := kgo.TryAbort
		if clean {
			try = kgo.TryCommit
		}
		if n.txnOpen {
			n.setStage("ending the open transaction")
			if err := n.endTransaction(ctx, try); err != nil {
				n.log.Warn("ending the last transaction", "error", err)
				timedOut(err)
			}
		}
	case AtLeastOnce:
		if clean && n.checkpointing {
			n.setStage("writing the final checkpoint")
			if err := n.checkpoint(ctx); err != nil {
				n.log.Warn("final checkpoint failed", "error", err)
				timedOut(err)
			}
		} else if clean {
			n.setStage("finishing the queued batches")
			err := n.drainTasks(ctx)
			if err == nil {
				n.setStage("committing the processed offsets")
				if err = n.cl.CommitMarkedOffsets(ctx); err != nil {
					n.log.Warn("final commit failed", "error", err)
				}
			}
			timedOut(err)
		}
	}
	n.setStage("stopping the tasks")
	n.stopWork()
	n.stopStandbys()
	n.stopFencer()
	n.mu.Lock()
	all := map[string][]int32{}
	for topic, ps := range n.mu.tasks {
		for p := range ps {
			all[topic] = append(all[topic], p)
		}
	}
	for k, pt := range n.mu.restoring {
		for _, topic := range pt.topics {
			all[topic] = append(all[topic], k.part)
		}
	}
	n.mu.Unlock()
	n.stopTasks(all, false)
	// Closing the client leaves the group (a dynamic member) and first
	// waits for a join or sync in flight: with a broker that does not
	// answer, up to the rebalance timeout (60s) and its retries.
	n.setStage("closing the Kafka client (leaving the group; a join in flight is waited for)")
	n.closing.Store(true)
	if n.sess != nil {
		n.sess.Close()
	} else {
		n.cl.Close()
	}
	st := n.Stats()
	attrs := []any{"in", st.In, "out", st.Out, "dead_lettered", st.DeadLettered, "dropped", st.Dropped,
		"commits", st.Commits, "aborts", st.Aborts}
	if !clean {
		// A clean stop (the context ended) is what was asked for: only
		// a failure is logged as an error.
		attrs = append(attrs, "error", cause)
	}
	n.log.Info("node stopped", attrs...)
	return stopErr
}
