package host_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
)

// records returns a RecordSource of n records; before the first it calls
// first, if set.
func records(n int, first func()) host.RecordSource {
	i := 0
	return func() (abi.Record, error) {
		if i == 0 && first != nil {
			first()
		}
		if i == n {
			return abi.Record{}, io.EOF
		}
		i++
		return abi.Record{Key: []byte("k"), Value: []byte("v")}, nil
	}
}

// unreachable checks that err is an UnreachableError naming addr, with
// want in its message, and that it came within bound.
func unreachable(t *testing.T, err error, addr, want string) {
	t.Helper()
	var u *host.UnreachableError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an UnreachableError naming %s and saying %q", err, addr, want)
	}
}

// TestProduceAndConsumeFailOnUnreachableBrokers: with a connect timeout,
// ProduceWith and Consume fail within it, naming the broker, whether it
// refuses connections or accepts them and answers nothing; a refused
// connection is tried again until the timeout (a broker still starting).
func TestProduceAndConsumeFailOnUnreachableBrokers(t *testing.T) {
	ctx := context.Background()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // accepted, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	const timeout = time.Second
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:1", "could not reach Kafka broker 127.0.0.1:1 within 1s: "},
		{silent.Addr().String(), "no answer from Kafka broker " + silent.Addr().String() + " within 1s"},
	} {
		_, err := host.ProduceWith(ctx, []string{tc.addr}, "t", records(3, nil), host.ProduceOptions{ConnectTimeout: timeout})
		unreachable(t, err, tc.addr, tc.want)
		n, err := host.Consume(ctx, []string{tc.addr}, "t", host.ConsumeOptions{Idle: 5 * timeout, ConnectTimeout: timeout},
			func(abi.Record, host.Meta) error { return nil })
		unreachable(t, err, tc.addr, tc.want)
		if n != 0 {
			t.Fatalf("consumed %d records", n)
		}
	}
}

// TestProduceFailsWhenTheBrokerGoesAway: records that wait the connect
// timeout for their acknowledgement while the broker cannot be reached
// fail the produce, naming the broker, instead of being retried for ever.
func TestProduceFailsWhenTheBrokerGoesAway(t *testing.T) {
	b := startBroker(t, "in")
	eb := b.Embedded(t, "cuts the network between the client and the broker")
	t.Cleanup(func() { eb.SetReachable(true) })
	const timeout = time.Second
	_, err := host.ProduceWith(context.Background(), b.Brokers(), "in", records(100, func() { eb.SetReachable(false) }),
		host.ProduceOptions{ConnectTimeout: timeout})
	unreachable(t, err, b.Addr(), "could not reach Kafka broker "+b.Addr())
}

// TestTopicChecks: with a connect timeout, Consume fails on a topic that
// does not exist (on any broker: a consumer does not create topics) and
// reads an empty one until idle; ProduceWith fails on a topic that does not
// exist on a cluster that does not create topics on first use, saying so,
// and creates it on one that does.
func TestTopicChecks(t *testing.T) {
	ctx := context.Background()
	b := startBroker(t, "present")
	opts := host.ConsumeOptions{Idle: 300 * time.Millisecond, ConnectTimeout: 5 * time.Second}
	none := func(abi.Record, host.Meta) error { return nil }
	_, err := host.Consume(ctx, b.Brokers(), "absent", opts, none)
	var nf *host.TopicNotFoundError
	if !errors.As(err, &nf) || nf.Topic != "absent" || err.Error() != "consume absent: topic absent does not exist on "+b.Addr() {
		t.Fatalf("consume of a topic that does not exist: %v", err)
	}
	if n, err := host.Consume(ctx, b.Brokers(), "present", opts, none); n != 0 || err != nil {
		t.Fatalf("consume of an empty topic: %d records, %v", n, err)
	}
	// The embedded broker creates topics on first use; the Apache Kafka
	// of the tests does not (auto.create.topics.enable=false), which the
	// strict cluster below covers.
	if n, err := host.ProduceWith(ctx, b.Brokers(), "created", records(2, nil), host.ProduceOptions{ConnectTimeout: 5 * time.Second}); !testkafka.Real() && (n != 2 || err != nil) {
		t.Fatalf("produce to a topic created on first use: %d records, %v", n, err)
	} else if testkafka.Real() && (n != 0 || err == nil || !strings.Contains(err.Error(), "topic created does not exist")) {
		t.Fatalf("produce to a topic that does not exist on Apache Kafka: %d records, %v", n, err)
	}

	// A cluster that does not create topics on first use, as Kafka with
	// auto.create.topics.enable=false.
	strict, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "present"))
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	_, err = host.ProduceWith(ctx, strict.ListenAddrs(), "absent", records(2, nil), host.ProduceOptions{ConnectTimeout: 5 * time.Second})
	if !errors.As(err, &nf) || !nf.AutoCreate || !strings.Contains(err.Error(), "topic absent does not exist on "+strict.ListenAddrs()[0]+
		", and the cluster does not create topics on first use (auto.create.topics.enable=false): create it first") {
		t.Fatalf("produce to a topic that is not created: %v", err)
	}
	if n, err := host.ProduceWith(ctx, strict.ListenAddrs(), "present", records(2, nil), host.ProduceOptions{ConnectTimeout: 5 * time.Second}); n != 2 || err != nil {
		t.Fatalf("produce to a topic that exists: %d records, %v", n, err)
	}
}
