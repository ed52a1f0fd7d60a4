package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/host/admin"
)

// globalTable is a table replicated to every task of a node: the node reads
// every partition of its topic into memory before it joins the group (so
// the first stream records see the whole table), then follows the topic.
// It implements join.Table; tasks only read it.
type globalTable struct {
	name, topic string
	cl          *kgo.Client
	log         *slog.Logger

	mu sync.RWMutex
	m  map[string][]byte
}

// Get implements join.Table.Get.
func (g *globalTable) Get(key []byte) ([]byte, bool, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	v, ok := g.m[string(key)]
	return v, ok, nil
}

// Put and Delete implement join.Table; only the node's reader changes the
// table.
func (g *globalTable) Put(key, value []byte) error {
	return errors.New("host: a global table changes only through its topic")
}

func (g *globalTable) Delete(key []byte) error {
	return errors.New("host: a global table changes only through its topic")
}

// Len returns the table's key count.
func (g *globalTable) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.m)
}

// openGlobalTable reads the table's topic to its end (read_committed).
func openGlobalTable(ctx context.Context, brokers []string, name, topic string, logger *slog.Logger) (*globalTable, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	g := &globalTable{name: name, topic: topic, cl: cl, log: logger, m: map[string][]byte{}}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("global table %s: end offsets of %s: %w", name, topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if len(ends) == 0 {
		cl.Close()
		return nil, fmt.Errorf("global table %s: topic %s not found", name, topic)
	}
	began := time.Now()
	for len(want) > 0 {
		fs := g.poll(ctx)
		if err := ctx.Err(); err != nil {
			cl.Close()
			return nil, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	logger.Info("global table loaded", "table", name, "topic", topic, "keys", g.Len(), "took", time.Since(began).Round(time.Millisecond))
	return g, nil
}

// poll applies one fetch.
func (g *globalTable) poll(ctx context.Context) kgo.Fetches {
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	fs := g.cl.PollFetches(pctx)
	fs.EachError(func(_ string, _ int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			g.log.Warn("global table: fetch", "table", g.name, "error", err)
		}
	})
	g.mu.Lock()
	fs.EachRecord(func(r *kgo.Record) {
		switch {
		case r.Key == nil:
		case r.Value == nil:
			delete(g.m, string(r.Key))
		default:
			g.m[string(r.Key)] = r.Value
		}
	})
	g.mu.Unlock()
	return fs
}

// run follows the topic until ctx ends.
func (g *globalTable) run(ctx context.Context) {
	for ctx.Err() == nil {
		g.poll(ctx)
	}
}

func (g *globalTable) close() { g.cl.Close() }

// openGlobals loads the pipeline's global tables and follows them until
// closeGlobals.
func (n *Node) openGlobals(ctx context.Context) error {
	n.globals = map[string]*globalTable{}
	gctx, cancel := context.WithCancel(ctx)
	n.stopGlobals = cancel
	for _, t := range n.p.Tables {
		if !t.Global {
			continue
		}
		g, err := openGlobalTable(ctx, n.cfg.Brokers, t.Name, t.Topic, n.log)
		if err != nil {
			n.closeGlobals()
			return err
		}
		n.globals[t.Name] = g
		n.globalsDone.Add(1)
		go func() {
			defer n.globalsDone.Done()
			g.run(gctx)
		}()
	}
	return nil
}

func (n *Node) closeGlobals() {
	if n.stopGlobals != nil {
		n.stopGlobals()
	}
	n.globalsDone.Wait()
	for _, g := range n.globals {
		g.close()
	}
}

// query answers a state query from the table (every node holds all of it).
func (g *globalTable) query(q admin.StateQuery) []admin.StateEntry {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []admin.StateEntry
	for k, v := range g.m {
		key := []byte(k)
		switch {
		case q.Key != nil && !bytes.Equal(key, q.Key):
			continue
		case q.Key == nil && q.Prefix != nil && !bytes.HasPrefix(key, q.Prefix):
			continue
		case q.Key == nil && q.Prefix == nil && (q.From != nil && bytes.Compare(key, q.From) < 0 || len(q.To) > 0 && bytes.Compare(key, q.To) >= 0):
			continue
		}
		out = append(out, admin.StateEntry{Key: key, Value: bytes.Clone(v), Partition: -1})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}
