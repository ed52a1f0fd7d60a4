package host

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A simMember is a member of a simulated group: what it owns and the
// copies it holds, as its JoinGroupMetadata would say.
type simMember struct {
	id     string
	gen    int32
	owned  []int32          // numbers it owns (of every topic)
	copies map[int32]int64  // its copies' positions
	takes  bool             // takes standbys (onAssigned set)
	old    bool             // a node before standby replicas: raw admin URL
	topics map[string]int32 // nil: all the topics balanced
}

// simResult is what a member reads of its assignment.
type simResult struct {
	parts   map[string][]int32
	numbers []int32 // the numbers it has partitions of
	sa      standbyAssignment
}

// balanceSim balances members with c as the leader and returns each
// member's assignment as it parses it from the sync bytes.
func balanceSim(t *testing.T, c copartitioned, members []simMember, topics map[string]int32) map[string]simResult {
	t.Helper()
	into := balanceInto(t, c, members, topics)
	out := map[string]simResult{}
	for _, a := range into.IntoSyncAssignment() {
		var r simResult
		var perr error
		mc := copartitioned{onAssigned: func(sa standbyAssignment, err error) { r.sa, perr = sa, err }}
		parts, err := mc.ParseSyncAssignment(a.MemberAssignment)
		if err != nil || perr != nil {
			t.Fatalf("%s: %v %v", a.MemberID, err, perr)
		}
		r.parts = parts
		for _, ps := range parts {
			for _, p := range ps {
				if !slices.Contains(r.numbers, p) {
					r.numbers = append(r.numbers, p)
				}
			}
		}
		slices.Sort(r.numbers)
		out[a.MemberID] = r
	}
	return out
}

func balanceInto(t *testing.T, c copartitioned, members []simMember, topics map[string]int32) kgo.IntoSyncAssignment {
	t.Helper()
	mb, _, err := c.MemberBalancer(simJoin(t, members, topics))
	if err != nil {
		t.Fatal(err)
	}
	into, err := mb.(*kgo.ConsumerBalancer).BalanceOrError(topics)
	if err != nil {
		t.Fatal(err)
	}
	return into
}

// simJoin returns what the members' JoinGroupMetadata says, as the leader
// gets it.
func simJoin(t *testing.T, members []simMember, topics map[string]int32) []kmsg.JoinGroupResponseMember {
	t.Helper()
	all := slices.Sorted(maps.Keys(topics))
	var jm []kmsg.JoinGroupResponseMember
	for _, sm := range members {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID = sm.id
		interests := all
		if sm.topics != nil {
			interests = slices.Sorted(maps.Keys(sm.topics))
		}
		current := map[string][]int32{}
		for _, tp := range interests {
			for _, p := range sm.owned {
				if p < topics[tp] {
					current[tp] = append(current[tp], p)
				}
			}
		}
		mc := copartitioned{adminURL: "http://" + sm.id}
		if sm.copies != nil {
			mc.copies = func() map[int32]int64 { return sm.copies }
		}
		if sm.takes {
			mc.onAssigned = func(standbyAssignment, error) {}
		}
		m.ProtocolMetadata = mc.JoinGroupMetadata(interests, current, sm.gen)
		if sm.old {
			var meta kmsg.ConsumerMemberMetadata
			if err := meta.ReadFrom(m.ProtocolMetadata); err != nil {
				t.Fatal(err)
			}
			meta.UserData = []byte("http://" + sm.id)
			m.ProtocolMetadata = meta.AppendTo(nil)
		}
		jm = append(jm, m)
	}
	return jm
}

// legacyBalance is the balance before standby replicas, kept as it was
// to check that without standbys and positions nothing changes.
type legacyBalance struct{}

func (legacyBalance) Balance(b *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	type member struct {
		m      *kmsg.JoinGroupResponseMember
		meta   *kmsg.ConsumerMemberMetadata
		owned  map[int32]bool
		assign []int32
	}
	var ms []*member
	b.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		mb := &member{m: m, meta: meta, owned: map[int32]bool{}}
		for _, o := range meta.OwnedPartitions {
			for _, p := range o.Partitions {
				mb.owned[p] = true
			}
		}
		ms = append(ms, mb)
	})
	sort.Slice(ms, func(i, j int) bool {
		if a, b := ms[i].m.InstanceID, ms[j].m.InstanceID; a != nil && b != nil && *a != *b {
			return *a < *b
		}
		return ms[i].m.MemberID < ms[j].m.MemberID
	})
	var numbers int32
	for t := range b.MemberTopics() {
		numbers = max(numbers, topics[t])
	}
	quota := func(i int) int {
		q := int(numbers) / len(ms)
		if i < int(numbers)%len(ms) {
			q++
		}
		return q
	}
	taken := make([]bool, numbers)
	for i, mb := range ms {
		for p := int32(0); p < numbers && len(mb.assign) < quota(i); p++ {
			if mb.owned[p] && !taken[p] {
				taken[p] = true
				mb.assign = append(mb.assign, p)
			}
		}
	}
	i := 0
	for p := int32(0); p < numbers; p++ {
		if taken[p] {
			continue
		}
		for len(ms[i].assign) >= quota(i) {
			i++
		}
		ms[i].assign = append(ms[i].assign, p)
	}
	plan := b.NewPlan()
	for _, mb := range ms {
		for _, t := range mb.meta.Topics {
			for _, p := range mb.assign {
				if p < topics[t] {
					plan.AddPartition(mb.m, t, p)
				}
			}
		}
	}
	plan.AdjustCooperative(b)
	return plan
}

// TestBalanceWithoutStandbysIsUnchanged balances random groups without
// standbys and positions, old members and new mixed, and checks the
// partitions are those of the balance before standby replicas.
// TestNodeBalancerSettings checks that a node's balancer takes its
// pipeline file's group settings, or Kafka Streams' defaults of them.
func TestNodeBalancerSettings(t *testing.T) {
	const file = "name: p\nsource: {topics: [in]}\nsteps:\n  - {name: up, kind: map, function: f.wasm}\nsink: {topic: out}\n"
	for _, tc := range []struct {
		lines    string
		standbys int
		lag      int64
		warmups  int
	}{
		{"", 0, 10000, 2},
		{"standby_replicas: 2\nacceptable_recovery_lag: 0\nmax_warmup_replicas: 7\n", 2, 0, 7},
		{"acceptable_recovery_lag: 250000\n", 0, 250000, 2},
	} {
		p, err := ParsePipeline("p.yaml", []byte(file+tc.lines))
		if err != nil {
			t.Fatal(err)
		}
		b := (&Node{p: p}).balancer()
		if b.standbys != tc.standbys || b.warmupLag != tc.lag || b.maxWarmups != tc.warmups {
			t.Errorf("%q: balancer with %d standbys, warm-up lag %d, at most %d warm-ups; want %d, %d, %d",
				tc.lines, b.standbys, b.warmupLag, b.maxWarmups, tc.standbys, tc.lag, tc.warmups)
		}
	}
}

func TestBalanceWithoutStandbysIsUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		topics := map[string]int32{"a": 1 + rng.Int32N(12), "b": 1 + rng.Int32N(12)}
		n := max(topics["a"], topics["b"])
		var members []simMember
		for i := range 1 + rng.IntN(5) {
			sm := simMember{id: fmt.Sprintf("m%d", i), gen: rng.Int32N(3), old: rng.IntN(3) == 0, takes: rng.IntN(2) == 0}
			if rng.IntN(4) == 0 {
				sm.topics = map[string]int32{"a": topics["a"]} // a member reading fewer topics
			}
			for p := range n {
				if rng.IntN(3) == 0 {
					sm.owned = append(sm.owned, p)
				}
			}
			members = append(members, sm)
		}
		got := balanceInto(t, copartitioned{warmupLag: 10000}, members, topics)
		lb, err := kgo.NewConsumerBalancer(legacyBalance{}, simJoin(t, members, topics))
		if err != nil {
			t.Fatal(err)
		}
		legacy, _ := lb.BalanceOrError(topics)
		if g, w := syncTopics(t, got), syncTopics(t, legacy); g != w {
			t.Fatalf("round %d, members %+v:\ngot  %s\nwant %s", round, members, g, w)
		}
		if _, ok := got.(*kgo.BalancePlan); !ok && !anyTakes(members) {
			t.Fatalf("round %d: a %T where no member takes standbys", round, got)
		}
	}
}

func anyTakes(ms []simMember) bool {
	return slices.ContainsFunc(ms, func(m simMember) bool { return m.takes && !m.old })
}

// syncTopics is the partitions of a sync assignment, member by member.
func syncTopics(t *testing.T, into kgo.IntoSyncAssignment) string {
	t.Helper()
	var s string
	for _, a := range into.IntoSyncAssignment() {
		var ka kmsg.ConsumerMemberAssignment
		if err := ka.ReadFrom(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		s += a.MemberID + ":"
		for _, tp := range ka.Topics {
			s += fmt.Sprintf(" %s%v", tp.Topic, tp.Partitions)
		}
		s += "; "
	}
	return s
}

// checkAssignment checks what holds of every assignment: no number is
// processed by two members, every number is processed by a member or
// still owned by one that revokes it now, and no member keeps a standby of
// a number it processes, or is given a warm-up that is not a standby.
func checkAssignment(t *testing.T, members []simMember, got map[string]simResult, numbers int32) {
	t.Helper()
	by := map[int32]string{}
	for id, r := range got {
		for _, p := range r.numbers {
			if by[p] != "" {
				t.Fatalf("number %d processed by %s and %s", p, by[p], id)
			}
			by[p] = id
		}
		for _, p := range r.sa.Standbys {
			if slices.Contains(r.numbers, p) {
				t.Fatalf("%s processes number %d and keeps a standby of it", id, p)
			}
		}
		for _, p := range r.sa.Warmups {
			if !slices.Contains(r.sa.Standbys, p) {
				t.Fatalf("%s warms up %d, not a standby %v", id, p, r.sa.Standbys)
			}
		}
	}
	for p := range numbers {
		if by[p] != "" {
			continue
		}
		if !slices.ContainsFunc(members, func(m simMember) bool { return slices.Contains(m.owned, p) }) {
			t.Fatalf("number %d is assigned to no member, and no member owned it: %v", p, got)
		}
	}
}

func TestBalanceStandbys(t *testing.T) {
	topics := map[string]int32{"in": 4, "changes": 4}
	const big = 1_000_000
	all := func(pos int64, ps ...int32) map[int32]int64 {
		m := map[int32]int64{}
		for _, p := range ps {
			m[p] = pos
		}
		return m
	}
	type want struct {
		numbers, standbys, warmups string
	}
	for _, tc := range []struct {
		name       string
		standbys   int
		lag        int64
		maxWarmups int
		members    []simMember
		want       map[string]want
	}{
		{
			// Quotas 2 1 1: m2 and m3 would warm 2 and 3 up; the cap of
			// one leaves 3 with m1, unwarmed, and m3 with nothing yet.
			name:       "warm-ups past the cap wait",
			lag:        100,
			maxWarmups: 1,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2", takes: true},
				{id: "m3", takes: true},
			},
			want: map[string]want{
				"m1": {numbers: "[0 1 2 3]"},
				"m2": {standbys: "[2]", warmups: "[2]"},
				"m3": {},
			},
		},
		{
			name:       "the cap leaves moves to caught-up copies alone",
			lag:        100,
			maxWarmups: 1,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2", copies: map[int32]int64{2: big}, takes: true},
				{id: "m3", takes: true},
			},
			// 2 moves to m2's caught-up copy (revoked first), 3 is
			// m3's one warm-up.
			want: map[string]want{
				"m1": {numbers: "[0 1 3]"},
				"m2": {standbys: "[2]", warmups: "[2]"},
				"m3": {standbys: "[3]", warmups: "[3]"},
			},
		},
		{
			name: "failover to the most caught-up copy",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{1}, copies: map[int32]int64{0: 50, 1: big, 2: 10}, takes: true},
				{id: "m2", owned: []int32{3}, copies: map[int32]int64{0: 90, 3: big}, takes: true},
			},
			// 0 has no live owner: m2's copy is ahead; 2 then to m1,
			// under quota, with the only copy.
			want: map[string]want{"m1": {numbers: "[1 2]"}, "m2": {numbers: "[0 3]"}},
		},
		{
			name: "failover to a copy only under quota",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{1, 2}, copies: map[int32]int64{0: 90, 1: big, 2: big}, takes: true},
				{id: "m2", owned: []int32{3}, copies: map[int32]int64{0: 50, 3: big}, takes: true},
			},
			want: map[string]want{"m1": {numbers: "[1 2]"}, "m2": {numbers: "[0 3]"}},
		},
		{
			name: "failover to a copy at quota, swapping for a copy under quota",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1}, copies: map[int32]int64{0: big, 1: big, 2: big}, takes: true},
				{id: "m2", owned: []int32{3}, copies: map[int32]int64{1: big - 5, 3: big}, takes: true},
			},
			// 2's owner died and only m1, at its quota, has a copy: m1
			// takes 2 and gives 1 to m2, whose copy of 1 is caught up.
			// m1 revokes 1 first (cooperative), so m2 warms it meanwhile.
			want: map[string]want{"m1": {numbers: "[0 2]"}, "m2": {numbers: "[3]", standbys: "[1]", warmups: "[1]"}},
		},
		{
			name: "failover without a swap when the copy under quota is behind",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1}, copies: map[int32]int64{0: big, 1: big, 2: big}, takes: true},
				{id: "m2", owned: []int32{3}, copies: map[int32]int64{1: 10, 3: big}, takes: true},
			},
			// m2's copy of 1 is far behind: a swap would restore 1
			// instead of 2; 2 goes to m2 as before.
			want: map[string]want{"m1": {numbers: "[0 1]"}, "m2": {numbers: "[2 3]"}},
		},
		{
			name:     "standbys are never on the owner, copies first",
			standbys: 1,
			lag:      100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1}, copies: all(big, 0, 1), takes: true},
				{id: "m2", owned: []int32{2, 3}, copies: map[int32]int64{2: big, 3: big, 0: 7}, takes: true},
				{id: "m3", takes: true},
			},
			// m3 joins: 3 members, quotas 2 1 1. m2 holds 3 over its
			// quota and m3 has no copy: m3 warms 3 up.
			want: map[string]want{
				"m1": {numbers: "[0 1]", standbys: "[2]"},
				"m2": {numbers: "[2 3]", standbys: "[0]"},
				"m3": {standbys: "[1 3]", warmups: "[3]"},
			},
		},
		{
			name:     "more standbys than members",
			standbys: 3,
			lag:      100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1}, takes: true},
				{id: "m2", owned: []int32{2, 3}, takes: true},
			},
			want: map[string]want{
				"m1": {numbers: "[0 1]", standbys: "[2 3]"},
				"m2": {numbers: "[2 3]", standbys: "[0 1]"},
			},
		},
		{
			name: "warm-up: the owner keeps what the newcomer has no copy of",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2", takes: true},
			},
			want: map[string]want{
				"m1": {numbers: "[0 1 2 3]"},
				"m2": {standbys: "[2 3]", warmups: "[2 3]"},
			},
		},
		{
			name: "warm-up: caught up, the owner revokes first",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2", copies: map[int32]int64{2: big - 100, 3: big - 101}, takes: true},
			},
			// 2 moves: cooperative, m1 revokes it now and m2 gets it
			// next time, warming it meanwhile; 3 is one record too far.
			want: map[string]want{
				"m1": {numbers: "[0 1 3]"},
				"m2": {standbys: "[2 3]", warmups: "[2 3]"},
			},
		},
		{
			name: "warm-up: a move goes to a caught-up copy first",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2", copies: map[int32]int64{}, takes: true},
				{id: "m3", copies: map[int32]int64{3: big}, takes: true},
			},
			// Quotas 2 1 1: 2 would go to m2 (first under quota), 3
			// to m3, caught up, at once (revoked first).
			want: map[string]want{
				"m1": {numbers: "[0 1 2]"},
				"m2": {standbys: "[2]", warmups: "[2]"},
				"m3": {standbys: "[3]", warmups: "[3]"},
			},
		},
		{
			name: "small state moves at once",
			lag:  100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(100, 0, 1, 2, 3), takes: true},
				{id: "m2", takes: true},
			},
			want: map[string]want{
				"m1": {numbers: "[0 1]"},
				"m2": {standbys: "[2 3]", warmups: "[2 3]"},
			},
		},
		{
			name: "negative lag: no warm-up",
			lag:  -1,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2"},
			},
			want: map[string]want{"m1": {numbers: "[0 1]"}, "m2": {}},
		},
		{
			name:     "an old receiver cannot warm up: it takes the number at once, and no standbys",
			standbys: 1,
			lag:      100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, copies: all(big, 0, 1, 2, 3), takes: true},
				{id: "m2", old: true},
			},
			// m1 revokes 2 and 3 and keeps its copies as standbys.
			want: map[string]want{"m1": {numbers: "[0 1]", standbys: "[2 3]"}, "m2": {}},
		},
		{
			// 2 and 3 move at once (m1 revokes them first); while
			// they do, each has its standby and its warm-up.
			name:     "an old owner tells no position: its numbers move at once",
			standbys: 1,
			lag:      100,
			members: []simMember{
				{id: "m1", owned: []int32{0, 1, 2, 3}, old: true},
				{id: "m2", takes: true},
				{id: "m3", takes: true},
			},
			want: map[string]want{
				"m1": {numbers: "[0 1]"},
				"m2": {standbys: "[0 2 3]", warmups: "[2]"},
				"m3": {standbys: "[1 2 3]", warmups: "[3]"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := copartitioned{standbys: tc.standbys, warmupLag: tc.lag, maxWarmups: tc.maxWarmups}
			got := balanceSim(t, c, tc.members, topics)
			checkAssignment(t, tc.members, got, 4)
			for id, w := range tc.want {
				r := got[id]
				g := want{numbers: fmt.Sprint(r.numbers), standbys: fmt.Sprint(r.sa.Standbys), warmups: fmt.Sprint(r.sa.Warmups)}
				for _, f := range []*string{&w.numbers, &w.standbys, &w.warmups} {
					if *f == "" {
						*f = "[]"
					}
				}
				if g != w {
					t.Errorf("%s: got %+v, want %+v", id, g, w)
				}
				if fmt.Sprint(r.parts["in"]) != fmt.Sprint(r.parts["changes"]) {
					t.Errorf("%s: not co-partitioned: %v", id, r.parts)
				}
			}
		})
	}
}

// TestBalanceConverges runs a group through members joining and leaving,
// feeding each round's assignment back as the next round's owned numbers
// and copies, as nodes would: an active copy is at the head of its
// changelog, a standby catches up a part of the way each round, a copy of
// a number a member no longer holds is dropped. It checks every round
// that no number is lost or processed twice and that no number leaves a
// live owner for a copy more than the warm-up lag behind, and that once
// the members stay the group settles: balanced, no warm-ups left, the
// same assignment round after round, each number with its standbys.
func TestBalanceConverges(t *testing.T) {
	const (
		numbers  = 12
		lag      = 100
		catchup  = 4000 // records a standby reads per round
		writes   = 30   // records written per number per round
		settleIn = 20   // rounds to settle after the last change
	)
	type event struct {
		round int
		join  string // or
		leave string
	}
	for _, tc := range []struct {
		name       string
		standbys   int
		events     []event
		maxWarmups int // and settleIn × 4 rounds to settle in
	}{
		{"grow and shrink", 1, []event{{0, "m1", ""}, {2, "m2", ""}, {4, "m3", ""}, {30, "", "m1"}, {33, "m4", ""}}, 0},
		{"no standbys", 0, []event{{0, "m1", ""}, {1, "m2", ""}, {2, "m3", ""}, {3, "m4", ""}, {40, "", "m2"}}, 0},
		{"two standbys, churn", 2, []event{{0, "m1", ""}, {0, "m2", ""}, {1, "m3", ""}, {3, "", "m1"}, {4, "m5", ""}, {5, "", "m3"}, {6, "m6", ""}}, 0},
		{"everyone leaves but one", 1, []event{{0, "m1", ""}, {0, "m2", ""}, {0, "m3", ""}, {20, "", "m1"}, {20, "", "m2"}}, 0},
		{"grow and shrink, two warm-ups at a time", 1, []event{{0, "m1", ""}, {2, "m2", ""}, {4, "m3", ""}, {30, "", "m1"}, {33, "m4", ""}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topics := map[string]int32{"in": numbers, "changes": numbers}
			c := copartitioned{standbys: tc.standbys, warmupLag: lag, maxWarmups: tc.maxWarmups}
			settleIn := settleIn
			if tc.maxWarmups > 0 {
				settleIn *= 4
			}
			heads := make([]int64, numbers)
			for p := range heads {
				heads[p] = 50_000 // past the lag: a cold copy must warm up
			}
			members := map[string]*simMember{}
			last := slices.MaxFunc(tc.events, func(a, b event) int { return a.round - b.round }).round
			var prev map[string]simResult
			stable := 0
			for round := 0; round <= last+settleIn; round++ {
				for _, e := range tc.events {
					if e.round != round {
						continue
					}
					if e.join != "" {
						members[e.join] = &simMember{id: e.join, copies: map[int32]int64{}, takes: true}
					}
					delete(members, e.leave)
				}
				var in []simMember
				for _, id := range slices.Sorted(maps.Keys(members)) {
					m := *members[id]
					m.gen = int32(round)
					in = append(in, m)
				}
				got := balanceSim(t, c, in, topics)
				checkAssignment(t, in, got, numbers)
				// No cold moves: a number a live member owned and no
				// longer gets went to a warm-up within the lag.
				for _, m := range in {
					for _, p := range m.owned {
						if slices.Contains(got[m.id].numbers, p) {
							continue
						}
						ok := false
						for id, r := range got {
							if id != m.id && slices.Contains(r.sa.Warmups, p) && m.copies[p]-members[id].copies[p] <= lag {
								ok = true
							}
						}
						if !ok {
							t.Fatalf("round %d: %d left %s (at %d) for no caught-up copy: %v", round, p, m.id, m.copies[p], got)
						}
					}
				}
				// At most maxWarmups warm-ups of copies behind (a
				// warm-up of a caught-up copy, while its owner revokes
				// the number first, is not one the cap counts).
				if tc.maxWarmups > 0 {
					cold := 0
					for id, r := range got {
						for _, p := range r.sa.Warmups {
							if heads[p]-members[id].copies[p] > lag {
								cold++
							}
						}
					}
					if cold > tc.maxWarmups {
						t.Fatalf("round %d: %d warm-ups of copies behind, the cap is %d: %v", round, cold, tc.maxWarmups, got)
					}
				}
				// The nodes act on it.
				for p := range heads {
					heads[p] += writes
				}
				for id, m := range members {
					r := got[id]
					copies := map[int32]int64{}
					for _, p := range r.numbers {
						copies[p] = heads[p]
					}
					for _, p := range r.sa.Standbys {
						copies[p] = min(heads[p], m.copies[p]+catchup)
					}
					m.owned, m.copies = r.numbers, copies
				}
				t.Logf("round %d: %v", round, got) // shown with -v or on failure
				if round <= last {
					prev = nil
					continue
				}
				settled := prev != nil && fmt.Sprint(prev) == fmt.Sprint(got)
				for _, r := range got {
					settled = settled && len(r.sa.Warmups) == 0 &&
						len(r.numbers) >= numbers/len(in) && len(r.numbers) <= (numbers+len(in)-1)/len(in)
				}
				if settled {
					stable++
					want := min(tc.standbys, len(in)-1)
					for p := range int32(numbers) {
						n := 0
						for _, r := range got {
							if slices.Contains(r.sa.Standbys, p) {
								n++
							}
						}
						if n != want {
							t.Fatalf("round %d: number %d has %d standbys, want %d: %v", round, p, n, want, got)
						}
					}
				}
				prev = got
			}
			if stable < 3 {
				t.Fatalf("not settled %d rounds after the last change: %v", settleIn, prev)
			}
		})
	}
}
