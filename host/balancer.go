package host

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// copartitioned is the node's group balancer. It assigns partitions by
// number: a member that gets partition p gets partition p of every topic it
// consumes, so that the co-partitioned inputs of a task (a stream and the
// table or stream it joins, the topics of one stage) are always read by the
// same node. It is sticky (a number stays with its owner while that keeps
// the balance) and cooperative (KIP-429: only moved partitions are revoked).
//
// A member's metadata carries userData (its admin URL) for the other nodes
// (queryable state).
type copartitioned struct{ userData []byte }

func (copartitioned) ProtocolName() string { return "eddy-copartitioned" }

func (copartitioned) IsCooperative() bool { return true }

func (c copartitioned) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.UserData = c.userData
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

func (copartitioned) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	return kgo.ParseConsumerSyncAssignment(assignment)
}

func (c copartitioned) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	b, err := kgo.NewConsumerBalancer(c, members)
	if err != nil {
		return nil, nil, err
	}
	return b, b.MemberTopics(), nil
}

// Balance implements kgo.ConsumerBalancerBalance.
func (copartitioned) Balance(b *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	type member struct {
		m      *kmsg.JoinGroupResponseMember
		meta   *kmsg.ConsumerMemberMetadata
		owned  map[int32]bool // partition numbers it owned
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
	// Quotas: each member gets floor(numbers/members), the first ones one
	// more.
	quota := func(i int) int {
		q := int(numbers) / len(ms)
		if i < int(numbers)%len(ms) {
			q++
		}
		return q
	}
	taken := make([]bool, numbers)
	// Keep numbers with their owners, up to the quota (when two members
	// claim a number, the first in order keeps it).
	for i, mb := range ms {
		for p := int32(0); p < numbers && len(mb.assign) < quota(i); p++ {
			if mb.owned[p] && !taken[p] {
				taken[p] = true
				mb.assign = append(mb.assign, p)
			}
		}
	}
	// Hand out the rest to members under their quota.
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
