package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/state"
	"github.com/eddy-streams/eddy/windowing"
)

// InProcess runs a pipeline without Kafka: records go straight into its
// tasks — the same tasks, steps, windows, joins and Badger stores as a node's
// — and what the tasks would produce is handed to a callback instead. Stages
// are chained in process: a record for a repartition topic goes to the next
// stage's task of its partition. It is the engine under `eddy bench
// nexmark`: it measures the node's own cost per record, without the broker.
//
// It is synchronous and single-threaded: Send returns when every record sent
// and everything it caused downstream has been processed. Commit settles the
// stores as a committed transaction would (there are no changelogs, and
// stores start empty). Not safe for concurrent use.
type InProcess struct {
	n       *Node
	tasks   map[taskKey]*task
	queue   []queued // records for downstream tasks, in order
	offsets map[topicPartition]int64
	// Out receives every record for the sink, the dead-letter topic or the
	// late topic, with the time the Send that caused it began. The
	// record's key and value are the callback's to keep; its headers are
	// valid only during the call.
	Out     func(topic string, r abi.Record, sent time.Time)
	headers []abi.Header
	sent    time.Time
}

type topicPartition struct {
	topic string
	part  int32
}

type queued struct {
	key taskKey
	rec *kgo.Record
}

// NewInProcess prepares a pipeline to run in process with the given number
// of partitions per topic. cfg.Engine is required; cfg.DataDir holds the
// stores of stateful steps (it must be empty or absent).
func NewInProcess(ctx context.Context, p *Pipeline, cfg NodeConfig, partitions int32) (*InProcess, error) {
	if cfg.Brokers == nil {
		cfg.Brokers = []string{"in-process"}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	n, err := NewNode(ctx, p, cfg)
	if err != nil {
		return nil, err
	}
	n.runCtx = ctx
	n.parts = partitions
	ip := &InProcess{n: n, tasks: map[taskKey]*task{}, offsets: map[topicPartition]int64{}}
	n.drv = ip
	if n.stateful() {
		if cfg.DataDir == "" {
			n.closeFunctions(ctx)
			return nil, errors.New("host: a stateful pipeline needs NodeConfig.DataDir")
		}
		if n.db, err = state.Open(cfg.DataDir, state.Options{Logger: n.log}); err != nil {
			n.closeFunctions(ctx)
			return nil, err
		}
	}
	n.globals = map[string]*globalTable{}
	for _, t := range p.Tables {
		if t.Global {
			n.globals[t.Name] = &globalTable{name: t.Name, topic: t.Topic, log: n.log, m: map[string][]byte{}}
		}
	}
	for i := range n.stages {
		for part := int32(0); part < partitions; part++ {
			k := taskKey{stage: i, part: part}
			t, err := n.newTask(ctx, k)
			if err != nil {
				ip.Close(ctx)
				return nil, err
			}
			ip.tasks[k] = t
		}
	}
	return ip, nil
}

// Close stops the tasks and closes the stores and functions.
func (ip *InProcess) Close(ctx context.Context) {
	for _, t := range ip.tasks {
		close(t.in)
		<-t.done
	}
	ip.n.closeFunctions(ctx)
	if ip.n.db != nil {
		ip.n.db.Close()
	}
}

// Send runs records of an input topic (a source topic, a table's topic or
// a joined stream) through the pipeline, partitioned by key like Kafka's
// default partitioner.
func (ip *InProcess) Send(ctx context.Context, topic string, recs []abi.Record) error {
	ip.sent = time.Now()
	n := ip.n
	if g := ip.global(topic); g != nil {
		g.mu.Lock()
		for i := range recs {
			if recs[i].Key == nil {
				continue
			}
			if recs[i].Value == nil {
				delete(g.m, string(recs[i].Key))
			} else {
				// A copy: the table keeps the value past the call, and
				// the caller may reuse its buffers.
				g.m[string(recs[i].Key)] = bytes.Clone(recs[i].Value)
			}
		}
		g.mu.Unlock()
		return nil
	}
	stage := slices.IndexFunc(n.stages, func(st Stage) bool { return slices.Contains(st.Inputs, topic) })
	if stage < 0 {
		return fmt.Errorf("send: topic %s is not an input of pipeline %s (its inputs: %s)", topic, n.p.Name, strings.Join(n.inputs(), ", "))
	}
	byPart := make([][]*kgo.Record, n.parts)
	// The records are not copied: tasks copy what they keep.
	krs := make([]kgo.Record, len(recs))
	for i := range recs {
		a := &recs[i]
		r := &krs[i]
		r.Topic, r.Key, r.Value, r.Timestamp = topic, a.Key, a.Value, time.UnixMilli(a.Timestamp)
		for _, h := range a.Headers {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		r.Partition = keyPartition(r.Key, n.parts)
		if r.Key == nil {
			r.Partition = int32(i) % n.parts
		}
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	for p, rs := range byPart {
		if len(rs) == 0 {
			continue
		}
		if err := ip.run(ctx, taskKey{stage: stage, part: int32(p)}, rs); err != nil {
			return err
		}
	}
	return ip.drain(ctx)
}

func (ip *InProcess) global(topic string) *globalTable {
	for _, g := range ip.n.globals {
		if g.topic == topic {
			return g
		}
	}
	return nil
}

// run processes records of one topic partition as a task's batches.
func (ip *InProcess) run(ctx context.Context, k taskKey, rs []*kgo.Record) error {
	t := ip.tasks[k]
	for len(rs) > 0 {
		m := min(len(rs), ip.n.p.BatchSize)
		b := &batch{records: rs[:m], last: rs[m-1]}
		for _, r := range b.records {
			tp := topicPartition{r.Topic, r.Partition}
			r.Offset = ip.offsets[tp]
			ip.offsets[tp]++
		}
		rs = rs[m:]
		t.admit(b)
		if err := t.process(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// drain processes what the tasks sent to repartition topics, until nothing
// is left.
func (ip *InProcess) drain(ctx context.Context) error {
	for len(ip.queue) > 0 {
		q := ip.queue
		ip.queue = nil
		// Consecutive records for one task form its batches, in order.
		for i := 0; i < len(q); {
			j := i
			for j < len(q) && q[j].key == q[i].key {
				j++
			}
			rs := make([]*kgo.Record, 0, j-i)
			for _, x := range q[i:j] {
				rs = append(rs, x.rec)
			}
			if err := ip.run(ctx, q[i].key, rs); err != nil {
				return err
			}
			i = j
		}
	}
	return nil
}

// InProcess is its node's driver: what the tasks produce is routed at
// once, nothing waits for an acknowledgement, and stores start empty.
var _ driver = (*InProcess)(nil)

func (ip *InProcess) send(_ context.Context, _ *task, _ *batch, r *kgo.Record) { ip.route(r) }
func (ip *InProcess) settled(*task, *batch)                                    {}
func (ip *InProcess) syncsTime() bool                                          { return false }

func (ip *InProcess) restoreTo(context.Context, *taskStore, int32, int64) (int64, error) {
	return 0, nil // stores start empty
}

// route takes a record a task produces.
func (ip *InProcess) route(r *kgo.Record) {
	n := ip.n
	for i, st := range n.stages {
		if st.Last || r.Topic != st.Output {
			continue
		}
		switch {
		case isProgress(r.Headers):
		case r.Key == nil:
			r.Partition = 0
		default:
			r.Partition = keyPartition(r.Key, n.parts)
		}
		ip.queue = append(ip.queue, queued{key: taskKey{stage: i + 1, part: r.Partition}, rec: r})
		return
	}
	if ip.Out != nil {
		a := abi.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
		ip.headers = ip.headers[:0]
		for _, h := range r.Headers {
			ip.headers = append(ip.headers, abi.Header{Key: h.Key, Value: h.Value})
		}
		a.Headers = ip.headers
		ip.Out(r.Topic, a, ip.sent)
	}
}

// Commit settles every store as after a committed transaction: window and
// join watermarks are saved and pending changes written to Badger.
func (ip *InProcess) Commit() error {
	for _, t := range ip.tasks {
		if err := t.saveWatermarks(); err != nil {
			return err
		}
		for _, ts := range t.allStores() {
			if ts == nil || ts.st.Pending() == 0 {
				continue
			}
			if err := ts.st.Commit(ts.next); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush ends the input: every window fires (windowing.Windower.Flush) and
// its results go on through the pipeline — the steps after their aggregate,
// then the next stages —, stage by stage. Join windows are not flushed
// (their unmatched records stay buffered).
func (ip *InProcess) Flush(ctx context.Context) error {
	ip.sent = time.Now()
	for i := range ip.n.stages {
		for part := int32(0); part < ip.n.parts; part++ {
			t := ip.tasks[taskKey{stage: i, part: part}]
			for s, tw := range t.windows {
				if tw == nil {
					continue
				}
				var out windowing.Output
				if err := tw.agg.w.Flush(&out); err != nil {
					return err
				}
				results, err := t.windowRecords(tw, out.Emits, tw.agg.watermark())
				if err != nil {
					return err
				}
				if err := t.runAfter(ctx, nil, s, results); err != nil {
					return err
				}
			}
			if err := t.flushTimers(ctx); err != nil {
				return err
			}
		}
		if err := ip.drain(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Stats returns the pipeline's counters.
func (ip *InProcess) Stats() Stats { return ip.n.Stats() }
