// Package testkafka gives integration tests their broker: an embedded one
// (franz-go's kfake, in process) by default, or the Apache Kafka broker
// that the environment variable EDDY_TEST_KAFKA names (host:port; see
// scripts/kafka.sh), so that the same tests run against both.
//
// A real broker is shared by every test that runs while it does: each test
// that asks for it starts from a clean broker (Start deletes every topic
// and consumer group but Kafka's own), so the tests of one run must not run
// in parallel — run them with `go test -p 1` and without t.Parallel.
package testkafka

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
)

// Env is the environment variable that names a real broker.
const Env = "EDDY_TEST_KAFKA"

// Partitions is the partition count of the topics Start creates, and the
// embedded broker's default for the topics it creates itself.
const Partitions = 4

// Broker is a test's broker.
type Broker struct {
	addr     string
	embedded *embedded.Broker // nil on a real broker
}

// Real reports whether tests run against the broker EDDY_TEST_KAFKA names.
func Real() bool { return os.Getenv(Env) != "" }

// Start gives the test a broker with topics created (Partitions
// partitions each): a new embedded broker, closed when the test ends, or the
// real one, emptied first.
func Start(t testing.TB, topics ...string) *Broker {
	t.Helper()
	return StartPartitions(t, Partitions, topics...)
}

// StartPartitions is Start with topics of the given partition count (also
// the embedded broker's default for topics clients create; a real broker's
// default is its own, 4 with scripts/kafka.sh).
func StartPartitions(t testing.TB, partitions int, topics ...string) *Broker {
	t.Helper()
	if addr := os.Getenv(Env); addr != "" {
		if err := Clean(context.Background(), addr); err != nil {
			t.Fatalf("%s=%s: %v", Env, addr, err)
		}
		if err := CreateTopics(context.Background(), addr, int32(partitions), topics...); err != nil {
			t.Fatalf("%s=%s: %v", Env, addr, err)
		}
		return &Broker{addr: addr}
	}
	b, err := embedded.Start(embedded.Config{Partitions: partitions, Topics: topics})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return &Broker{addr: b.Addr(), embedded: b}
}

// Addr is the broker's address, host:port.
func (b *Broker) Addr() string { return b.addr }

// Brokers is Addr as a seed list.
func (b *Broker) Brokers() []string { return []string{b.addr} }

// Embedded returns the embedded broker, for a test that needs what only it
// can do (inject faults request by request, cut the network, compact now).
// On a real broker it skips the test, saying why: such a test runs in the
// embedded pass only.
func (b *Broker) Embedded(t testing.TB, why string) *embedded.Broker {
	t.Helper()
	if b.embedded == nil {
		t.Skipf("needs the embedded broker (%s): runs against it, not against %s", why, b.addr)
	}
	return b.embedded
}

// Clean deletes every topic and consumer group of the broker at addr but
// Kafka's own, and waits until they are gone.
func Clean(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	if names := groups.Groups(); len(names) > 0 {
		if _, err := adm.DeleteGroups(ctx, names...); err != nil {
			return fmt.Errorf("delete groups: %w", err)
		}
	}
	for {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		names := slices.DeleteFunc(topics.Names(), func(n string) bool { return strings.HasPrefix(n, "__") })
		if len(names) == 0 {
			return nil
		}
		if _, err := adm.DeleteTopics(ctx, names...); err != nil {
			return fmt.Errorf("delete topics: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics still there after deleting them: %v", names)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// CreateTopics creates topics with the given partitions (the broker's
// default replication, 1 on the test broker) and waits until they are
// served, as the node's own host.CreateTopics does.
func CreateTopics(ctx context.Context, addr string, partitions int32, topics ...string) error {
	if len(topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return host.CreateTopics(ctx, []string{addr}, partitions, topics...)
}
