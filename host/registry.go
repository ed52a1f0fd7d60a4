package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/state"
)

// registryLog is a node's view of the registry topic: it reads the topic
// into a registry.State (and a local copy in the state database, when the
// node has one), tails it for new events, and writes deploys.
type registryLog struct {
	topic string
	cl    *kgo.Client
	log   *slog.Logger
	local *state.Store // nil without a data directory
	// trust says which events this reader verifies, key signs the events
	// it writes (nil: unsigned).
	trust registryTrust
	// onEvent is called (without mu held) for every event that takes
	// effect after the initial catch-up, in log order, by the tail loop.
	onEvent func(*registry.Event)

	mu      sync.Mutex
	changed *sync.Cond // signalled when next advances
	st      *registry.State
	next    int64 // offset after the last applied record
	// notified is next once onEvent has seen the events before it: a
	// publisher waits for it, so that its event is staged when it returns.
	notified int64
	failed   error // the tail loop's error, once it has stopped
}

// registryTrust is what a registry reader verifies and signs with.
type registryTrust struct {
	// pipeline's step events must be signed with key (registry.Require),
	// unless unsigned; "" verifies nothing.
	pipeline string
	key      []byte
	unsigned bool
	// refused counts the records skipped as malformed or unverified (nil:
	// not counted).
	refused *atomic.Int64
}

func (r *registryLog) newState() *registry.State {
	st := registry.NewState()
	if r.trust.pipeline != "" && !r.trust.unsigned {
		st.Require(r.trust.pipeline, r.trust.key)
	}
	return st
}

// openRegistry creates the registry topic if needed (compacted, one
// partition), loads the local copy and reads the topic to its end, so that
// the node starts with the live versions.
func openRegistry(ctx context.Context, brokers []string, topic string, db *state.DB, logger *slog.Logger, trust registryTrust) (*registryLog, error) {
	if err := CreateCompactedTopics(ctx, brokers, 1, topic); err != nil {
		return nil, fmt.Errorf("registry topic %s: %w", topic, err)
	}
	r := &registryLog{topic: topic, log: logger, trust: trust}
	r.st = r.newState()
	r.changed = sync.NewCond(&r.mu)
	if db != nil {
		r.local = db.Store("", "registry:"+topic, 0)
		r.local.Abort()
		if err := r.loadLocal(); err != nil {
			// The topic has it all: start over from it.
			logger.Warn("registry: local copy unreadable; reading the topic from the start", "error", err)
			if err := r.local.Wipe(); err != nil {
				return nil, err
			}
			r.st, r.next = r.newState(), 0
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(r.next)}}),
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	if err != nil {
		return nil, err
	}
	r.cl = cl
	end, err := r.end(ctx)
	if err != nil {
		cl.Close()
		return nil, err
	}
	for r.next < end {
		if err := r.poll(ctx, false); err != nil {
			cl.Close()
			return nil, fmt.Errorf("registry: catching up: %w", err)
		}
	}
	return r, nil
}

// end returns the registry partition's end offset.
func (r *registryLog) end(ctx context.Context) (int64, error) {
	ends, err := kadm.NewClient(r.cl).ListEndOffsets(ctx, r.topic)
	if err != nil {
		return 0, fmt.Errorf("registry: end offset: %w", err)
	}
	o, ok := ends.Lookup(r.topic, 0)
	if !ok || o.Err != nil {
		return 0, fmt.Errorf("registry: end offset of %s: %v", r.topic, o.Err)
	}
	return o.Offset, nil
}

// Local copy: one entry per record, keyed by its offset (so a scan is in log
// order), holding the record's key and value.
func (r *registryLog) loadLocal() error {
	next, err := r.local.Checkpoint()
	if err != nil || next < 0 {
		return err
	}
	err = r.local.Scan(nil, func(k, v []byte) error {
		rec, err := registry.DecodeLocal(v)
		if len(k) != 8 || err != nil {
			return fmt.Errorf("malformed entry (key of %d bytes): %w", len(k), err)
		}
		_, err = r.st.Apply(rec)
		if errors.Is(err, registry.ErrMalformed) {
			r.skipped(int64(binary.BigEndian.Uint64(k)), err)
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	r.next = next
	return nil
}

// poll fetches and applies one round of records. With notify, events that
// take effect are passed to onEvent.
func (r *registryLog) poll(ctx context.Context, notify bool) error {
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	fs := r.cl.PollFetches(pctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	var ferr error
	fs.EachError(func(_ string, _ int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			ferr = err
		}
	})
	if ferr != nil {
		return ferr
	}
	var took []*registry.Event
	r.mu.Lock()
	fs.EachRecord(func(rec *kgo.Record) {
		ev, err := r.st.Apply(registry.Record{Key: rec.Key, Value: rec.Value})
		if err != nil {
			r.skipped(rec.Offset, err)
		}
		if ev != nil {
			took = append(took, ev)
		}
		if r.local != nil {
			if err := r.local.Put(binary.BigEndian.AppendUint64(nil, uint64(rec.Offset)), registry.AppendLocal(nil, registry.Record{Key: rec.Key, Value: rec.Value})); err != nil {
				// Over the store's limits (state.ErrTooLarge): no record the
				// nodes write is (chunks are 512 KiB).
				r.log.Warn("registry: record not kept in the local copy", "offset", rec.Offset, "error", err)
			}
		}
		r.next = rec.Offset + 1
	})
	var lerr error
	if r.local != nil && len(r.local.Changes()) > 0 {
		lerr = r.local.Commit(r.next)
	}
	next := r.next
	r.mu.Unlock()
	if lerr != nil {
		r.log.Warn("registry: local copy not saved", "error", lerr)
	}
	if notify && r.onEvent != nil {
		for _, ev := range took {
			r.onEvent(ev)
		}
	}
	r.mu.Lock()
	r.notified = next
	r.changed.Broadcast()
	r.mu.Unlock()
	return nil
}

// skipped logs and counts a record the registry refused. Unverified
// events are errors: someone wrote the registry topic without the key, or
// this node's token differs from the writer's.
func (r *registryLog) skipped(offset int64, err error) {
	if r.trust.refused != nil {
		r.trust.refused.Add(1)
	}
	if errors.Is(err, registry.ErrUnverified) {
		r.log.Error("registry: refusing an event that is not signed with this node's key (its admin token); every node of a pipeline needs the same token",
			"offset", offset, "error", err)
		return
	}
	r.log.Warn("registry: skipping a record", "offset", offset, "error", err)
}

// run tails the registry until ctx ends.
func (r *registryLog) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := r.poll(ctx, true); err != nil && ctx.Err() == nil {
			r.log.Warn("registry: fetch failed; retrying", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	r.mu.Lock()
	r.failed = ctx.Err()
	r.changed.Broadcast()
	r.mu.Unlock()
}

func (r *registryLog) close() { r.cl.Close() }

// view calls fn with the registry state under the lock.
func (r *registryLog) view(fn func(*registry.State)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.st)
}

// ErrConflict is returned by publish when another event took the version
// number first.
var ErrConflict = errors.New("registry: another event took this version first; retry")

// publish writes a module (when the registry lacks it) and an event that
// uses it, then waits until the tail loop has read the event back. It
// returns the event as it took effect, or ErrConflict.
func (r *registryLog) publish(ctx context.Context, module []byte, ev registry.Event) (registry.Event, error) {
	var recs []registry.Record
	r.mu.Lock()
	if module != nil {
		if _, ok := r.st.Module(registry.Digest(module)); !ok {
			recs = registry.ModuleRecords(module, 0)
		}
	}
	r.mu.Unlock()
	if r.trust.key != nil {
		if err := registry.Sign(&ev, r.trust.key); err != nil {
			return ev, err
		}
	}
	rec, err := registry.EventRecord(&ev)
	if err != nil {
		return ev, err
	}
	recs = append(recs, rec)
	var last int64
	for _, x := range recs {
		res := r.cl.ProduceSync(ctx, &kgo.Record{Topic: r.topic, Partition: 0, Key: x.Key, Value: x.Value})
		if err := res.FirstErr(); err != nil {
			return ev, fmt.Errorf("registry: write: %w", err)
		}
		last = res[0].Record.Offset
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.changed.Broadcast()
		r.mu.Unlock()
	})
	defer stop()
	for r.notified <= last {
		if ctx.Err() != nil {
			return ev, ctx.Err()
		}
		if r.failed != nil {
			return ev, fmt.Errorf("registry: reader stopped: %w", r.failed)
		}
		r.changed.Wait()
	}
	for _, e := range r.st.Step(ev.Pipeline, ev.Step).History {
		if e.ID == ev.ID {
			return e, nil
		}
	}
	return ev, ErrConflict
}
