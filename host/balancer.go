package host

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxPartitionNumbers bounds the partition numbers the balancer assigns
// (and the tables it sizes by them); partitions past it are not assigned.
const maxPartitionNumbers = 1 << 16

// copartitioned is the node's group balancer. It assigns partitions by
// number: a member that gets partition p gets partition p of every topic it
// consumes, so that the co-partitioned inputs of a task (a stream and the
// table or stream it joins, the topics of one stage) are always read by the
// same node. It is sticky (a number stays with its owner while that keeps
// the balance) and cooperative (KIP-429: only moved partitions are revoked).
//
// It also places standby copies of each number's state (standby_replicas)
// and warm-ups (KIP-441): a number is not moved from a live owner to a
// member whose copy of its state is far behind; that member warms a copy
// up as a standby first. docs/design.md, "Standby replicas and warm-up:
// the assignment", has the algorithm.
//
// A member's metadata carries its memberData (memberdata.go): its admin URL
// for the other nodes (queryable state) and the positions of its local
// copies of state, which the leader balances with. The assignment to each
// member carries its standbyAssignment.
//
// The funcs are called by the client's group management goroutine, never
// concurrently with each other for one client.
type copartitioned struct {
	// adminURL is where this node's admin API answers, for the other
	// nodes; at most maxAdminURLLen bytes (a longer one is sent as none).
	adminURL string
	// standbys is how many standby copies of each number the leader
	// places (pipeline standby_replicas). Only the leader's value counts.
	standbys int
	// warmupLag is how many records (changelog offsets, summed over a
	// number's changelog partitions) a member's copy may be behind the
	// owner's for the number to move to it at once; a copy further behind
	// is warmed up first (pipeline acceptable_recovery_lag). Negative: no
	// warm-ups, numbers move at once (as before standby replicas). Only the
	// leader's value counts.
	warmupLag int64
	// maxWarmups caps the warm-ups of one assignment, over all members:
	// a number past the cap stays with its owner, unwarmed, until a later
	// assignment (the one that a caught-up warm-up asks for moves its
	// number and frees its place). So a node that joins a group with much
	// state reads at most this many numbers' changelogs at once besides
	// its standbys, and the brokers serve at most this many catch-ups
	// (pipeline max_warmup_replicas). 0: no cap. Only the leader's value
	// counts.
	maxWarmups int
	// copies, if not nil, is called each time the member joins the group
	// (JoinGroupMetadata) and returns its local copies of state: partition
	// number → position (see memberData.Copies), of the numbers it owns
	// and of its standbys. It must not block.
	copies func() map[int32]int64
	// onAssigned, if not nil, is called with each new assignment
	// (ParseSyncAssignment), before the client revokes or assigns
	// partitions for it: the numbers this member keeps standby copies of,
	// and which of those are warm-ups (to be taken over once caught up).
	// err is not nil when the leader's standby data did not read (a is
	// then empty; the partitions are assigned all the same). It must not
	// block, and it must not call back into the client. A member with
	// onAssigned nil tells the leader it takes no standbys.
	onAssigned func(a standbyAssignment, err error)
	// synced, if not nil, is called after each assignment
	// (ParseSyncAssignment). It must not block.
	synced func()
}

func (copartitioned) ProtocolName() string { return "eddy-copartitioned" }

func (copartitioned) IsCooperative() bool { return true }

func (c copartitioned) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	meta := kmsg.NewConsumerMemberMetadata()
	d := memberData{AdminURL: c.adminURL, TakesStandbys: c.onAssigned != nil}
	if c.copies != nil {
		d.Copies = c.copies()
	}
	meta.UserData = appendMemberData(nil, d)
	meta.Version = 3
	meta.Topics = interests
	meta.Generation = generation
	topics := make([]string, 0, len(current))
	for t := range current {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		owned := kmsg.NewConsumerMemberMetadataOwnedPartition()
		owned.Topic = t
		owned.Partitions = slices.Sorted(slices.Values(current[t]))
		meta.OwnedPartitions = append(meta.OwnedPartitions, owned)
	}
	return meta.AppendTo(nil)
}

func (c copartitioned) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(assignment); err != nil {
		return nil, fmt.Errorf("sync assignment parse failed: %w", err)
	}
	m := make(map[string][]int32, len(a.Topics))
	for _, t := range a.Topics {
		m[t.Topic] = t.Partitions
	}
	if c.onAssigned != nil {
		// Standbys that do not read are no reason to refuse the
		// partitions: the member would rejoin to the same leader's same
		// assignment, again and again.
		c.onAssigned(decodeStandbyAssignment(a.UserData))
	}
	if c.synced != nil {
		c.synced()
	}
	return m, nil
}

func (c copartitioned) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	b, err := kgo.NewConsumerBalancer(c, members)
	if err != nil {
		return nil, nil, err
	}
	return b, b.MemberTopics(), nil
}

// balanceMember is a member of the group as Balance sees it.
type balanceMember struct {
	m     *kmsg.JoinGroupResponseMember
	meta  *kmsg.ConsumerMemberMetadata
	data  memberData
	owned map[int32]bool // numbers it owned (any partition of)
	quota int

	intended int     // numbers the balance gives it (quota accounting)
	active   []int32 // numbers it processes in this generation
	standby  map[int32]bool
	warmup   map[int32]bool
}

// position returns the member's copy position of number p, 0 without one
// (a copy restored from nothing starts there).
func (mb *balanceMember) position(p int32) int64 { return mb.data.Copies[p] }

func (mb *balanceMember) hasCopy(p int32) bool {
	_, ok := mb.data.Copies[p]
	return ok
}

// Balance implements kgo.ConsumerBalancerBalance.
func (c copartitioned) Balance(b *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	var ms []*balanceMember
	b.EachMember(func(m *kmsg.JoinGroupResponseMember, meta *kmsg.ConsumerMemberMetadata) {
		// A member whose data does not read is balanced as one without
		// copies or standbys.
		data, _ := decodeMemberData(meta.UserData)
		mb := &balanceMember{m: m, meta: meta, data: data, owned: map[int32]bool{}, standby: map[int32]bool{}, warmup: map[int32]bool{}}
		for _, o := range meta.OwnedPartitions {
			for _, p := range o.Partitions {
				mb.owned[p] = true
			}
		}
		ms = append(ms, mb)
	})
	plan := b.NewPlan()
	if len(ms) == 0 {
		return plan
	}
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
	// The counts come from the cluster's metadata, not from a member, but
	// the tables below are sized by them: bounded all the same (a
	// pipeline's topics have at most maxPartitionNumbers partitions; eddy
	// broker and the CLI refuse more than 10,000).
	numbers = min(numbers, maxPartitionNumbers)
	c.assign(ms, numbers)

	for _, mb := range ms {
		for _, t := range mb.meta.Topics {
			for _, p := range mb.active {
				if p < topics[t] {
					plan.AddPartition(mb.m, t, p)
				}
			}
		}
	}
	planned := plan.AsMemberIDMap()
	before := make(map[*balanceMember][]int32, len(ms))
	for _, mb := range ms {
		for _, p := range mb.active {
			if plansNumber(planned[mb.m.MemberID], p) {
				before[mb] = append(before[mb], p)
			}
		}
	}
	plan.AdjustCooperative(b)

	// A number the cooperative adjustment held back (its owner revokes it
	// first) comes to its member in the next rebalance: meanwhile the
	// member follows its state as a warm-up.
	withStandbys := false
	for _, mb := range ms {
		if mb.data.TakesStandbys {
			for _, p := range before[mb] {
				if !plansNumber(planned[mb.m.MemberID], p) {
					mb.standby[p], mb.warmup[p] = true, true
				}
			}
		}
		withStandbys = withStandbys || len(mb.standby) > 0
	}
	if !withStandbys {
		return plan
	}
	out := &standbyPlan{plan: plan, standbys: map[string]standbyAssignment{}}
	for _, mb := range ms {
		if len(mb.standby) > 0 {
			out.standbys[mb.m.MemberID] = standbyAssignment{
				Standbys: slices.Sorted(func(yield func(int32) bool) {
					for p := range mb.standby {
						if !yield(p) {
							return
						}
					}
				}),
				Warmups: slices.Sorted(func(yield func(int32) bool) {
					for p := range mb.warmup {
						if !yield(p) {
							return
						}
					}
				}),
			}
		}
	}
	return out
}

// plansNumber reports whether a member's plan has a partition numbered p.
func plansNumber(plan map[string][]int32, p int32) bool {
	for _, ps := range plan {
		if slices.Contains(ps, p) {
			return true
		}
	}
	return false
}

// assign decides, for members ms in balance order, which numbers each
// processes (active), keeps a standby copy of (standby) and warms up
// (warmup, a subset of standby). docs/design.md, "Standby replicas and
// warm-up: the assignment", describes it step by step.
func (c copartitioned) assign(ms []*balanceMember, numbers int32) {
	// Quotas: each member gets floor(numbers/members), the first ones one
	// more.
	for i, mb := range ms {
		mb.quota = int(numbers) / len(ms)
		if i < int(numbers)%len(ms) {
			mb.quota++
		}
	}
	under := func(mb *balanceMember) bool { return mb.intended < mb.quota }
	// 1. Keep numbers with their owners, up to the quota (when two members
	// claim a number, the first in order keeps it).
	taken := make([]bool, numbers)
	for _, mb := range ms {
		for p := int32(0); p < numbers && mb.intended < mb.quota; p++ {
			if mb.owned[p] && !taken[p] {
				taken[p] = true
				mb.intended++
				mb.active = append(mb.active, p)
			}
		}
	}
	// The live owner of each number no member kept: the claimant of the
	// highest generation (the first in order of those).
	owner := make([]*balanceMember, numbers)
	for _, mb := range ms {
		for p := range mb.owned {
			if p >= 0 && p < numbers && !taken[p] && (owner[p] == nil || mb.meta.Generation > owner[p].meta.Generation) {
				owner[p] = mb
			}
		}
	}
	// 2. Failover: a number without a live owner goes to the member under
	// quota with the most caught-up copy of it. When the most caught-up
	// copy is on a member at its quota (step 1 filled it with numbers it
	// owns) and no copy under quota comes within warmupLag of it, that
	// member takes the number and hands one of its own to a member under
	// quota whose copy of that one is within warmupLag (swapForCopy):
	// both move to caught-up copies instead of one being restored whole.
	for p := int32(0); p < numbers; p++ {
		if taken[p] || owner[p] != nil {
			continue
		}
		var best, top *balanceMember
		for _, mb := range ms {
			if !mb.hasCopy(p) {
				continue
			}
			if under(mb) && (best == nil || mb.position(p) > best.position(p)) {
				best = mb
			}
			if top == nil || mb.position(p) > top.position(p) {
				top = mb
			}
		}
		if top != nil && top != best && (best == nil || c.warmupLag >= 0 && top.position(p)-best.position(p) > c.warmupLag) {
			if mb := c.swapForCopy(ms, p, under); mb != nil {
				best = mb
			}
		}
		if best != nil {
			taken[p] = true
			best.intended++
			best.active = append(best.active, p)
		}
	}
	// 3. The rest, in order of number: to the first member under quota;
	// a number moving from a live owner that reports its position goes
	// preferably to the member under quota with the most caught-up copy
	// within warmupLag. If the receiver's copy is further behind, the
	// owner keeps the number for now and the receiver warms a copy up.
	first, warmups := 0, 0
	for p := int32(0); p < numbers; p++ {
		if taken[p] {
			continue
		}
		for !under(ms[first]) {
			first++
		}
		r := ms[first]
		o := owner[p]
		warm := o != nil && c.warmupLag >= 0 && o.hasCopy(p)
		behind := func(mb *balanceMember) bool { return o.position(p)-mb.position(p) > c.warmupLag }
		if warm {
			var best *balanceMember
			for _, mb := range ms {
				if under(mb) && !behind(mb) && (best == nil || mb.position(p) > best.position(p)) {
					best = mb
				}
			}
			if best != nil {
				r = best
			}
		}
		taken[p] = true
		r.intended++
		if warm && r.data.TakesStandbys && behind(r) {
			o.active = append(o.active, p)
			if c.maxWarmups <= 0 || warmups < c.maxWarmups {
				r.standby[p], r.warmup[p] = true, true
				warmups++
			}
			continue
		}
		r.active = append(r.active, p)
	}
	for _, mb := range ms {
		slices.Sort(mb.active)
	}
	if c.standbys <= 0 {
		return
	}
	// 4. Standbys: each number gets c.standbys standby members among
	// those that take standbys, never its active member, warm-ups
	// counting. The members under the standby cap first, then those
	// holding a copy, the most caught-up first, then the least loaded.
	var takers []*balanceMember
	for _, mb := range ms {
		if mb.data.TakesStandbys {
			takers = append(takers, mb)
		}
	}
	if len(takers) == 0 {
		return
	}
	active := make([]*balanceMember, numbers)
	for _, mb := range ms {
		for _, p := range mb.active {
			active[p] = mb
		}
	}
	limit := (int(numbers)*c.standbys + len(takers) - 1) / len(takers)
	candidates := make([]*balanceMember, 0, len(takers))
	for p := int32(0); p < numbers; p++ {
		need := c.standbys
		candidates = candidates[:0]
		for _, mb := range takers {
			switch {
			case mb.standby[p]:
				need--
			case mb != active[p]:
				candidates = append(candidates, mb)
			}
		}
		if need <= 0 {
			continue
		}
		slices.SortStableFunc(candidates, func(a, b *balanceMember) int {
			return cmp.Or(
				cmpBool(len(a.standby) < limit, len(b.standby) < limit),
				cmpBool(a.hasCopy(p), b.hasCopy(p)),
				cmp.Compare(b.position(p), a.position(p)),
				cmp.Compare(len(a.active)+len(a.standby), len(b.active)+len(b.standby)),
			)
		})
		for _, mb := range candidates[:min(need, len(candidates))] {
			mb.standby[p] = true
		}
	}
}

// swapForCopy finds, for number p without a live owner, a member at its
// quota with a copy of p (the most caught-up first) that can give one of
// its numbers q to a member under quota whose copy of q is within
// warmupLag of its own (the most caught-up such copy). It moves q and
// returns the member that is to take p (its count already holds q's
// place), or nil when no such pair exists.
func (c copartitioned) swapForCopy(ms []*balanceMember, p int32, under func(*balanceMember) bool) *balanceMember {
	holders := make([]*balanceMember, 0, len(ms))
	for _, mb := range ms {
		if !under(mb) && mb.hasCopy(p) && mb.position(p) > 0 {
			holders = append(holders, mb)
		}
	}
	slices.SortStableFunc(holders, func(a, b *balanceMember) int { return cmp.Compare(b.position(p), a.position(p)) })
	for _, h := range holders {
		for i, q := range h.active {
			var to *balanceMember
			for _, mb := range ms {
				if mb == h || !under(mb) || !mb.hasCopy(q) || c.warmupLag >= 0 && h.position(q)-mb.position(q) > c.warmupLag {
					continue
				}
				if to == nil || mb.position(q) > to.position(q) {
					to = mb
				}
			}
			if to != nil {
				h.active = slices.Delete(h.active, i, i+1)
				h.intended--
				to.active = append(to.active, q)
				to.intended++
				return h
			}
		}
	}
	return nil
}

// cmpBool orders true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// standbyPlan is a balance plan with the standby numbers of each member,
// which go into the UserData of its assignment.
type standbyPlan struct {
	plan     *kgo.BalancePlan
	standbys map[string]standbyAssignment // by member ID
}

// IntoSyncAssignment implements kgo.IntoSyncAssignment, as
// kgo.BalancePlan.IntoSyncAssignment does, with each member's standbys.
func (s *standbyPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	plan := s.plan.AsMemberIDMap()
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(plan))
	for member, assignment := range plan {
		var ka kmsg.ConsumerMemberAssignment
		for topic, partitions := range assignment {
			t := kmsg.NewConsumerMemberAssignmentTopic()
			t.Topic = topic
			t.Partitions = slices.Sorted(slices.Values(partitions))
			ka.Topics = append(ka.Topics, t)
		}
		sort.Slice(ka.Topics, func(i, j int) bool { return ka.Topics[i].Topic < ka.Topics[j].Topic })
		if a, ok := s.standbys[member]; ok && !a.empty() {
			ka.UserData = appendStandbyAssignment(nil, a)
		}
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID = member
		sa.MemberAssignment = ka.AppendTo(nil)
		out = append(out, sa)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MemberID < out[j].MemberID })
	return out
}
