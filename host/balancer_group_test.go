package host

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/pipeline"
)

// TestStandbysThroughTheBroker runs a group of three clients with the
// node's balancer on the embedded broker: the partitions are shared as
// before, and each member's standbys come through the broker to its
// onAssigned, none on a number it consumes, every number with one.
func TestStandbysThroughTheBroker(t *testing.T) {
	b, err := embedded.Start(embedded.Config{Partitions: 6, Topics: []string{"in"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	type member struct {
		cl       *kgo.Client
		mu       sync.Mutex
		standbys []int32
		owned    map[int32]bool
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ms []*member
	for i := range 3 {
		m := &member{owned: map[int32]bool{}}
		track := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
			return func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
				m.mu.Lock()
				defer m.mu.Unlock()
				for _, p := range ps["in"] {
					if add {
						m.owned[p] = true
					} else {
						delete(m.owned, p)
					}
				}
			}
		}
		bal := copartitioned{
			adminURL:  fmt.Sprintf("http://node%d", i),
			standbys:  1,
			warmupLag: pipeline.DefaultAcceptableRecoveryLag,
			copies:    func() map[int32]int64 { return nil },
			onAssigned: func(a standbyAssignment, err error) {
				if err != nil {
					t.Error(err)
				}
				m.mu.Lock()
				m.standbys = a.Standbys
				m.mu.Unlock()
			},
		}
		m.cl, err = kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup("standbys"), kgo.ConsumeTopics("in"),
			kgo.Balancers(bal), kgo.OnPartitionsAssigned(track(true)),
			kgo.OnPartitionsRevoked(track(false)), kgo.OnPartitionsLost(track(false)))
		if err != nil {
			t.Fatal(err)
		}
		defer m.cl.Close()
		ms = append(ms, m)
	}
	var wg sync.WaitGroup
	pctx, stop := context.WithCancel(ctx)
	for _, m := range ms {
		wg.Go(func() {
			for pctx.Err() == nil {
				m.cl.PollFetches(pctx)
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	for {
		done, state := true, ""
		standbys := map[int32]int{}
		active := map[int32]int{}
		for i, m := range ms {
			m.mu.Lock()
			sb := slices.Clone(m.standbys)
			var own []int32
			for p := range m.owned {
				own = append(own, p)
			}
			m.mu.Unlock()
			slices.Sort(own)
			state += fmt.Sprintf("m%d: %v standbys %v; ", i, own, sb)
			for _, p := range own {
				active[p]++
				// Between onAssigned and the revoke a demoted number is
				// both: only a settled group must not have it.
				done = done && !slices.Contains(sb, p)
			}
			for _, p := range sb {
				standbys[p]++
			}
			done = done && len(own) == 2
		}
		for p := range int32(6) {
			done = done && active[p] == 1 && standbys[p] == 1
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the group did not settle: %s", state)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
