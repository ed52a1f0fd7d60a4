package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/windowing"
)

// Queryable state: a node answers queries about its pipeline's stores from
// the committed state of its partitions (what read_committed consumers of
// its output have seen), forwards a key it does not own to the node that
// does, and completes a scan by asking every other node of the group. Nodes
// find each other through the consumer group: each advertises its admin URL
// in its group membership (AdvertiseAdmin), and the group's description says
// which member holds which partitions.

// AdvertiseAdmin sets the admin API URL this node announces to the other
// nodes of its group, and the token it sends when it forwards a query to
// them. Call it before Run.
func (n *Node) AdvertiseAdmin(url, token string) {
	n.adminURL, n.adminToken = url, token
}

// queryStore is a store a query can read.
type queryStore struct {
	name  string // the store's keyspace name
	step  int    // the step that owns it, or the join step of a table
	stage int
	agg   bool // an aggregate step's windows: values are accumulators
	// global is a global table: every node holds all of it, in memory.
	global *globalTable
}

func (n *Node) findStore(name string) (queryStore, error) {
	for i, s := range n.p.Steps {
		if s.Name == name && (s.State || s.Kind == StepAggregate) {
			return queryStore{name: s.Name, step: i, stage: n.stageOfStep(i), agg: s.Kind == StepAggregate}, nil
		}
	}
	for i, s := range n.p.Steps {
		if s.Kind == StepJoin && s.Table == name {
			return queryStore{name: tableStore(name), step: i, stage: n.stageOfStep(i), global: n.globals[name]}, nil
		}
	}
	var names []string
	for _, s := range n.p.Steps {
		if s.State || s.Kind == StepAggregate {
			names = append(names, s.Name)
		}
	}
	for _, t := range n.p.Tables {
		names = append(names, t.Name)
	}
	return queryStore{}, admin.Errorf(http.StatusNotFound, admin.CodeNotFound,
		"pipeline %s has no store %q; its stores: %v", n.p.Name, name, names)
}

func (n *Node) stageOfStep(s int) int {
	for i, st := range n.stages {
		if st.contains(s) {
			return i
		}
	}
	return 0
}

// tableStore is the keyspace of a table.
func tableStore(name string) string { return "table:" + name }

// State implements admin.Backend.State.
func (a nodeAdmin) State(ctx context.Context, q admin.StateQuery) (admin.StateResult, error) {
	n := a.n
	if err := a.ready(ctx); err != nil {
		return admin.StateResult{}, err
	}
	if err := a.own(q.Pipeline); err != nil {
		return admin.StateResult{}, err
	}
	qs, err := n.findStore(q.Store)
	if err != nil {
		return admin.StateResult{}, err
	}
	if n.db == nil {
		return admin.StateResult{}, admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable, "the node has not opened its state yet")
	}
	if q.Limit <= 0 {
		q.Limit = admin.DefaultStateLimit
	}
	res := admin.StateResult{Node: n.adminURL}
	if qs.global != nil {
		res.Entries = qs.global.query(q)
		return res, nil
	}
	if q.Key != nil {
		p := keyPartition(q.Key, n.parts)
		if !n.owns(qs.stage, p) {
			if q.Local {
				return res, admin.Errorf(http.StatusMisdirectedRequest, "not_owner", "this node does not hold partition %d of %s", p, q.Store)
			}
			return n.forward(ctx, qs.stage, p, q)
		}
		res.Entries, err = n.readStore(ctx, qs, p, q)
		return res, err
	}
	for _, p := range n.ownedPartitions(qs.stage) {
		es, err := n.readStore(ctx, qs, p, q)
		if err != nil {
			return res, err
		}
		res.Entries = append(res.Entries, es...)
	}
	if !q.Local {
		others, err := n.groupAdmins(ctx)
		if err != nil {
			return res, err
		}
		q.Local = true
		for _, url := range others {
			r, err := (&admin.Client{BaseURL: url, Token: n.adminToken}).State(ctx, q)
			if err != nil {
				n.log.Warn("state scan: a node did not answer", "node", url, "error", err)
				res.Partial, res.Missing = true, append(res.Missing, url)
				continue
			}
			res.Entries = append(res.Entries, r.Entries...)
		}
	}
	sort.SliceStable(res.Entries, func(i, j int) bool {
		if c := bytes.Compare(res.Entries[i].Key, res.Entries[j].Key); c != 0 {
			return c < 0
		}
		wi, wj := res.Entries[i].Window, res.Entries[j].Window
		return wi != nil && wj != nil && wi[0] < wj[0]
	})
	if len(res.Entries) > q.Limit {
		res.Entries = res.Entries[:q.Limit]
	}
	return res, nil
}

func (n *Node) owns(stage int, p int32) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.groups[taskKey{stage: stage, part: p}] != nil
}

func (n *Node) ownedPartitions(stage int) []int32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ps []int32
	for k := range n.mu.groups {
		if k.stage == stage {
			ps = append(ps, k.part)
		}
	}
	slices.Sort(ps)
	return ps
}

// readStore reads a store's committed entries of partition p that match q.
func (n *Node) readStore(ctx context.Context, qs queryStore, p int32, q admin.StateQuery) ([]admin.StateEntry, error) {
	st := n.db.Store(n.p.Name, qs.name, p) // a fresh view: committed state only
	match := func(key []byte) bool {
		switch {
		case q.Key != nil:
			return bytes.Equal(key, q.Key)
		case q.Prefix != nil:
			return bytes.HasPrefix(key, q.Prefix)
		default:
			return (q.From == nil || bytes.Compare(key, q.From) >= 0) && (len(q.To) == 0 || bytes.Compare(key, q.To) < 0)
		}
	}
	var out []admin.StateEntry
	if !qs.agg {
		if q.Key != nil {
			v, ok, err := st.Get(q.Key)
			if err != nil || !ok {
				return nil, err
			}
			return []admin.StateEntry{{Key: q.Key, Value: v, Partition: p}}, nil
		}
		err := st.Scan(q.Prefix, func(k, v []byte) error {
			if match(k) && len(out) < q.Limit {
				out = append(out, admin.StateEntry{Key: bytes.Clone(k), Value: bytes.Clone(v), Partition: p})
			}
			return nil
		})
		return out, err
	}
	// An aggregate store: the result of each window, from its accumulator
	// or, for hopping windows, the merge of its panes' (windowing.Compose).
	cfg, err := n.p.Steps[qs.step].windowing()
	if err != nil {
		return nil, err
	}
	wm := int64(math.MinInt64)
	if v, ok, err := st.Get(watermarkKey); err != nil {
		return nil, err
	} else if ok && len(v) == 8 {
		wm = int64(binary.BigEndian.Uint64(v))
	}
	type unitsOf struct {
		key   []byte
		units []windowing.Window
		accs  map[windowing.Window][]byte
	}
	var groups []*unitsOf
	err = st.Scan([]byte{'a'}, func(k, v []byte) error {
		key, w, ok := parseAccKey(k)
		if !ok || !match(key) {
			return nil
		}
		// Entries come by key, then window start.
		if len(groups) == 0 || !bytes.Equal(groups[len(groups)-1].key, key) {
			groups = append(groups, &unitsOf{key: bytes.Clone(key), accs: map[windowing.Window][]byte{}})
		}
		g := groups[len(groups)-1]
		g.units = append(g.units, w)
		g.accs[w] = bytes.Clone(v)
		return nil
	})
	if err != nil || len(groups) == 0 {
		return nil, err
	}
	lf := n.current(qs.step)
	inst, err := lf.fn.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer lf.fn.Release(ctx, inst)
	var keys, accs [][]byte
	var wins [][2]int64
	var merged []runtime.Result
	for _, g := range groups {
		for _, c := range cfg.Compose(wm, g.units) {
			if len(keys) == q.Limit {
				break
			}
			acc := g.accs[c.Units[0]]
			for _, u := range c.Units[1:] {
				if merged, err = inst.AggMerge(ctx, [][]byte{g.key}, [][]byte{acc}, [][]byte{g.accs[u]}, merged[:0]); err != nil {
					return nil, err
				}
				if merged[0].Err != nil {
					return nil, fmt.Errorf("merging the panes of %q %v: %w", g.key, c.Window, merged[0].Err)
				}
				acc = bytes.Clone(merged[0].Bytes)
			}
			keys, accs = append(keys, g.key), append(accs, acc)
			wins = append(wins, [2]int64{c.Window.Start, c.Window.End})
		}
	}
	res, err := inst.AggResult(ctx, keys, accs, nil)
	if err != nil {
		return nil, err
	}
	for i := range keys {
		e := admin.StateEntry{Key: keys[i], Partition: p, Window: &wins[i]}
		if res[i].Err != nil {
			return nil, fmt.Errorf("result of %q %v: %w", keys[i], wins[i], res[i].Err)
		}
		e.Value = bytes.Clone(res[i].Bytes)
		out = append(out, e)
	}
	return out, nil
}

// forward asks the node that owns partition p of the stage.
func (n *Node) forward(ctx context.Context, stage int, p int32, q admin.StateQuery) (admin.StateResult, error) {
	owner, err := n.ownerOf(ctx, stage, p)
	if err != nil {
		return admin.StateResult{}, err
	}
	q.Local = true
	res, err := (&admin.Client{BaseURL: owner, Token: n.adminToken}).State(ctx, q)
	if err != nil {
		return res, fmt.Errorf("forwarding to %s, the owner of partition %d: %w", owner, p, err)
	}
	res.Owner = owner
	return res, nil
}

// groupMembers describes the group: each member's admin URL and partitions.
func (n *Node) groupMembers(ctx context.Context) (map[string]map[string][]int32, error) {
	cl := n.clientLoaded.Load()
	if cl == nil {
		return nil, admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable, "the node has not joined its group yet")
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	groups, err := kadm.NewClient(cl).DescribeGroups(dctx, n.p.Name)
	if err != nil {
		return nil, fmt.Errorf("describe group %s: %w", n.p.Name, err)
	}
	g, ok := groups[n.p.Name]
	if !ok || g.Err != nil {
		return nil, fmt.Errorf("describe group %s: %v", n.p.Name, g.Err)
	}
	out := map[string]map[string][]int32{}
	for _, m := range g.Members {
		meta, ok := m.Join.AsConsumer()
		if !ok || len(meta.UserData) == 0 {
			continue
		}
		as, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		parts := map[string][]int32{}
		for _, t := range as.Topics {
			parts[t.Topic] = t.Partitions
		}
		out[string(meta.UserData)] = parts
	}
	return out, nil
}

// ownerOf returns the admin URL of the member that holds partition p of
// the stage.
func (n *Node) ownerOf(ctx context.Context, stage int, p int32) (string, error) {
	members, err := n.groupMembers(ctx)
	if err != nil {
		return "", err
	}
	for url, parts := range members {
		for _, topic := range n.stages[stage].Inputs {
			if slices.Contains(parts[topic], p) {
				return url, nil
			}
		}
	}
	return "", admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable,
		"no node of the group holds partition %d now (a rebalance?); retry", p)
}

// groupAdmins returns the admin URLs of the other members of the group.
func (n *Node) groupAdmins(ctx context.Context) ([]string, error) {
	members, err := n.groupMembers(ctx)
	if err != nil {
		return nil, err
	}
	var urls []string
	for url := range members {
		if url != n.adminURL {
			urls = append(urls, url)
		}
	}
	sort.Strings(urls)
	return urls, nil
}
