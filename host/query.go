package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"sync"
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
// nodes of its group, and the admin token its peer calls are signed with
// (admin.PeerKey: the token itself is never sent to a peer; without one the
// node's peer calls are unsigned, see peer). Call it before Run.
func (n *Node) AdvertiseAdmin(url, token string) {
	n.adminURL, n.peerKey = url, admin.PeerKey(token)
}

// peerStateTimeout bounds a peer's answer to a state query.
const peerStateTimeout = 10 * time.Second

// maxPeers bounds the peers one call asks: a group can hold members that
// are not nodes (any client allowed to join it).
const maxPeers = 64

// DefaultPeerAllow is where a node sends peer calls unless
// NodeConfig.PeerAllow says otherwise: this machine only.
var DefaultPeerAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// peerAllowed reports why a member's advertised admin URL is not one this
// node may call ("" if it is): an http URL of an IP address (no name to
// resolve, no path) within the allow-list. An unspecified address (a node
// listening on 0.0.0.0) is this machine's.
func (n *Node) peerAllowed(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Port() == "" {
		return "not an http://IP:PORT admin URL"
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return "not an IP address"
	}
	ip = ip.Unmap()
	allow := n.cfg.PeerAllow
	if allow == nil {
		allow = DefaultPeerAllow
	}
	cands := []netip.Addr{ip}
	if ip.IsUnspecified() {
		cands = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	}
	for _, p := range allow {
		for _, c := range cands {
			if p.Contains(c) {
				return ""
			}
		}
	}
	return fmt.Sprintf("%s is outside the peer allow-list %v (--peer-allow)", ip, allow)
}

// peer returns the client of a peer call to url: signed with the peer key.
// A node without a token has no key: it asks unsigned (it has no token to
// leak) and takes the answer unverified, which the allow-list (default:
// this machine) keeps to peers that can read its status anyway.
func (n *Node) peer(url string) *admin.Client {
	return &admin.Client{BaseURL: url, PeerKey: n.peerKey, HTTP: peerHTTP}
}

// peerHTTP follows no redirect: a peer's answer is its own.
var peerHTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

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
		if st.Contains(s) {
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
		if n.owns(qs.stage, p) {
			res.Entries, err = n.readStore(ctx, qs, p, q)
			return res, err
		}
		if q.Stale {
			if lag, ok := n.standbyCopy(qs.name, p); ok {
				res.Entries, err = n.readStore(ctx, qs, p, q)
				res.Standby, res.Lag = true, lag
				return res, err
			}
		}
		if q.Local {
			return res, admin.Errorf(http.StatusMisdirectedRequest, "not_owner", "this node does not hold partition %d of %s", p, q.Store)
		}
		return n.forward(ctx, qs.stage, p, q)
	}
	for _, p := range n.ownedPartitions(qs.stage) {
		es, err := n.readStore(ctx, qs, p, q)
		if err != nil {
			return res, err
		}
		res.Entries = append(res.Entries, es...)
	}
	if !q.Local {
		others, refused, err := n.groupAdmins(ctx)
		if err != nil {
			return res, err
		}
		for _, p := range refused {
			res.Partial, res.Missing = true, append(res.Missing, p.Admin)
		}
		q.Local = true
		// In parallel, each within peerStateTimeout: a member that does
		// not answer (it need not be a node) delays the scan by that much.
		answers := make([]admin.StateResult, len(others))
		errs := make([]error, len(others))
		var wg sync.WaitGroup
		for i, url := range others {
			wg.Go(func() {
				pctx, cancel := context.WithTimeout(ctx, peerStateTimeout)
				defer cancel()
				answers[i], errs[i] = n.peer(url).State(pctx, q)
			})
		}
		wg.Wait()
		for i, url := range others {
			if errs[i] != nil {
				n.log.Warn("state scan: a node did not answer", "node", url, "error", errs[i])
				res.Partial, res.Missing = true, append(res.Missing, url)
				continue
			}
			res.Entries = append(res.Entries, answers[i].Entries...)
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
	cfg, err := n.p.Steps[qs.step].Windowing(n.p.Source.ValueFormat())
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
		key, w, err := parseAccKey(k)
		if err != nil || !match(key) {
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

// forward asks the node that owns partition p of the stage. For a stale
// query that the owner does not answer, it asks the nodes that keep a
// standby copy of p.
func (n *Node) forward(ctx context.Context, stage int, p int32, q admin.StateQuery) (admin.StateResult, error) {
	members, err := n.groupMembers(ctx)
	if err != nil {
		return admin.StateResult{}, err
	}
	q.Local = true
	owner, err := n.ownerOf(members, stage, p)
	var res admin.StateResult
	if err == nil {
		if res, err = n.askPeer(ctx, owner, q); err == nil {
			res.Owner = owner
			return res, nil
		}
		err = fmt.Errorf("forwarding to %s, the owner of partition %d: %w", owner, p, err)
	}
	if !q.Stale {
		return res, err
	}
	for _, url := range slices.Sorted(maps.Keys(members)) {
		if url == n.adminURL || !slices.Contains(members[url].copies, p) {
			continue
		}
		if sres, serr := n.askPeer(ctx, url, q); serr == nil && sres.Standby {
			sres.Owner = owner
			return sres, nil
		}
	}
	return res, err
}

// askPeer asks the node at url a query, within peerStateTimeout.
func (n *Node) askPeer(ctx context.Context, url string, q admin.StateQuery) (admin.StateResult, error) {
	if why := n.peerAllowed(url); why != "" {
		return admin.StateResult{}, admin.Errorf(http.StatusBadGateway, admin.CodeUnavailable,
			"this node does not ask %s: %s", url, why)
	}
	pctx, cancel := context.WithTimeout(ctx, peerStateTimeout)
	defer cancel()
	return n.peer(url).State(pctx, q)
}

// groupMember is a member of the group as its description shows it: its
// partitions by topic, and the partition numbers it keeps a standby copy
// of (its assignment's standbys, warm-ups among them).
type groupMember struct {
	parts  map[string][]int32
	copies []int32
}

// groupMembers describes the group: its members by admin URL.
func (n *Node) groupMembers(ctx context.Context) (map[string]groupMember, error) {
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
	out := map[string]groupMember{}
	for _, m := range g.Members {
		meta, ok := m.Join.AsConsumer()
		if !ok {
			continue
		}
		data, err := decodeMemberData(meta.UserData)
		if err != nil || data.AdminURL == "" {
			continue
		}
		as, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		gm := groupMember{parts: map[string][]int32{}}
		for _, t := range as.Topics {
			gm.parts[t.Topic] = t.Partitions
		}
		if sa, err := decodeStandbyAssignment(as.UserData); err == nil {
			gm.copies = sa.Standbys
		}
		out[data.AdminURL] = gm
	}
	return out, nil
}

// ownerOf returns the admin URL of the member of members that holds
// partition p of the stage.
func (n *Node) ownerOf(members map[string]groupMember, stage int, p int32) (string, error) {
	for url, m := range members {
		for _, topic := range n.stages[stage].Inputs {
			if slices.Contains(m.parts[topic], p) {
				return url, nil
			}
		}
	}
	return "", admin.Errorf(http.StatusServiceUnavailable, admin.CodeUnavailable,
		"no node of the group holds partition %d now (a rebalance?); retry", p)
}

// groupAdmins returns the admin URLs of the other members of the group
// that this node may ask, and those it may not, with why.
func (n *Node) groupAdmins(ctx context.Context) (urls []string, refused []PeerError, err error) {
	members, err := n.groupMembers(ctx)
	if err != nil {
		return nil, nil, err
	}
	for url := range members {
		if url == n.adminURL {
			continue
		}
		why := n.peerAllowed(url)
		if why == "" && len(urls) == maxPeers {
			why = fmt.Sprintf("not asked: over %d peers", maxPeers)
		}
		if why != "" {
			refused = append(refused, PeerError{Admin: url, Error: why})
			continue
		}
		urls = append(urls, url)
	}
	sort.Strings(urls)
	sort.Slice(refused, func(i, j int) bool { return refused[i].Admin < refused[j].Admin })
	if len(refused) > 0 {
		n.log.Debug("peers not asked", "peers", refused)
	}
	return urls, refused, nil
}
