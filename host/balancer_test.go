package host

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func balance(t *testing.T, owned []map[string][]int32, topics map[string]int32) map[string]map[string][]int32 {
	t.Helper()
	var interests []string
	for tp := range topics {
		interests = append(interests, tp)
	}
	var members []kmsg.JoinGroupResponseMember
	for i, o := range owned {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID = fmt.Sprintf("m%d", i)
		m.ProtocolMetadata = copartitioned{}.JoinGroupMetadata(interests, o, 1)
		members = append(members, m)
	}
	mb, _, err := copartitioned{}.MemberBalancer(members)
	if err != nil {
		t.Fatal(err)
	}
	into, err := mb.(*kgo.ConsumerBalancer).BalanceOrError(topics)
	if err != nil {
		t.Fatal(err)
	}
	return into.(*kgo.BalancePlan).AsMemberIDMap()
}

func TestCopartitionedBalancer(t *testing.T) {
	topics := map[string]int32{"orders": 5, "users": 5, "small": 2}
	plan := balance(t, []map[string][]int32{nil, nil, nil}, topics)
	seen := map[int32]string{}
	for m, ts := range plan {
		if len(ts["orders"]) != len(ts["users"]) {
			t.Fatalf("%s: orders %v users %v: not co-partitioned", m, ts["orders"], ts["users"])
		}
		for i, p := range ts["orders"] {
			if ts["users"][i] != p {
				t.Fatalf("%s: orders %v users %v: not co-partitioned", m, ts["orders"], ts["users"])
			}
			if seen[p] != "" {
				t.Fatalf("partition %d given to %s and %s", p, seen[p], m)
			}
			seen[p] = m
		}
		for _, p := range ts["small"] {
			if seen[p] != m {
				t.Fatalf("small[%d] is on %s, orders[%d] on %s", p, m, p, seen[p])
			}
		}
		if n := len(ts["orders"]); n < 1 || n > 2 {
			t.Fatalf("%s has %d partitions of 5 among 3 members", m, n)
		}
	}
	if len(seen) != 5 {
		t.Fatalf("%d of 5 partitions assigned", len(seen))
	}

	// A member joins: the owners keep what their quota allows, and a
	// cooperative plan moves nothing that another member still owns.
	owned := []map[string][]int32{
		{"orders": {0, 1, 2}, "users": {0, 1, 2}, "small": {0, 1}},
		{"orders": {3, 4}, "users": {3, 4}},
		nil,
	}
	plan = balance(t, owned, topics)
	if got := fmt.Sprint(plan["m0"]["orders"]); got != "[0 1]" {
		t.Fatalf("m0 keeps %s, want [0 1] (its quota is 2)", got)
	}
	if got := fmt.Sprint(plan["m1"]["orders"]); got != "[3 4]" {
		t.Fatalf("m1 keeps %s, want [3 4]", got)
	}
	if len(plan["m2"]["orders"]) != 0 {
		t.Fatalf("m2 gets %v before m0 revoked it (cooperative)", plan["m2"]["orders"])
	}
	// Next round, m0 no longer owns 2: m2 gets it.
	owned[0] = map[string][]int32{"orders": {0, 1}, "users": {0, 1}, "small": {0, 1}}
	plan = balance(t, owned, topics)
	if got := fmt.Sprint(plan["m2"]["orders"], plan["m2"]["users"]); got != "[2] [2]" {
		t.Fatalf("m2 gets %s, want [2] [2]", got)
	}
}
