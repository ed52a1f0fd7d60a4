package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultConnectTimeout is how long the commands that read or write a topic
// (eddy produce, eddy consume) wait for brokers that cannot be reached
// before they fail: long enough for a broker that is starting, short enough
// that a wrong address fails while the user waits.
const DefaultConnectTimeout = 10 * time.Second

// UnreachableError says brokers could not be reached within a connect
// timeout: connections to them failed (Err is the last failure), or they
// accepted connections but answered nothing (Err is nil).
type UnreachableError struct {
	Brokers []string // host:port
	// Advertised says the brokers are addresses the cluster advertised for
	// itself, not ones the command was given: the seed broker answered,
	// but its advertised.listeners name addresses this machine cannot
	// reach (a broker in a container, say).
	Advertised bool
	Timeout    time.Duration
	Err        error
}

func (e *UnreachableError) Error() string {
	broker := "broker"
	if len(e.Brokers) > 1 {
		broker = "brokers"
	}
	var b strings.Builder
	if e.Err == nil {
		fmt.Fprintf(&b, "no answer from Kafka %s %s within %s", broker, strings.Join(e.Brokers, ", "), e.Timeout)
	} else {
		fmt.Fprintf(&b, "could not reach Kafka %s %s within %s", broker, strings.Join(e.Brokers, ", "), e.Timeout)
	}
	if e.Advertised {
		b.WriteString(" (the address the cluster advertises: check the brokers' advertised.listeners)")
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// TopicNotFoundError says a topic does not exist on the cluster.
type TopicNotFoundError struct {
	Topic   string
	Brokers []string
	// AutoCreate says the command asked the cluster to create the topic on
	// first use, and the cluster does not (auto.create.topics.enable=false).
	AutoCreate bool
}

func (e *TopicNotFoundError) Error() string {
	s := fmt.Sprintf("topic %s does not exist on %s", e.Topic, strings.Join(e.Brokers, ","))
	if e.AutoCreate {
		s += ", and the cluster does not create topics on first use (auto.create.topics.enable=false): create it first"
	}
	return s
}

// connWatch follows a client's connection attempts (a kgo hook), so that a
// command waiting on the cluster can tell brokers that cannot be reached
// from slow ones, and name them.
type connWatch struct {
	seeds []string // the seed brokers given, host:port
	mu    sync.Mutex
	// failing holds the brokers whose connection attempts have failed
	// since their last success, by host:port.
	failing map[string]connFailure
}

// connFailure is a broker's run of failed connection attempts.
type connFailure struct {
	since time.Time // when the first failed attempt began
	err   error     // the last attempt's error
}

func newConnWatch(seeds []string) *connWatch {
	w := &connWatch{failing: map[string]connFailure{}}
	for _, s := range seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(s, "9092") // kgo's default port
		}
		w.seeds = append(w.seeds, s)
	}
	return w
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (w *connWatch) OnBrokerConnect(m kgo.BrokerMetadata, took time.Duration, _ net.Conn, err error) {
	addr := net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port)))
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.failing, addr)
		return
	}
	f, ok := w.failing[addr]
	if !ok {
		f.since = time.Now().Add(-took)
	}
	f.err = err
	w.failing[addr] = f
}

// unreachable returns an UnreachableError naming the brokers whose
// connection attempts have all failed for at least d (0: any failing now),
// or nil if there are none. Seed brokers are named before the addresses the
// cluster advertised, which matter only when no seed is failing.
func (w *connWatch) unreachable(d, timeout time.Duration) *UnreachableError {
	w.mu.Lock()
	defer w.mu.Unlock()
	var seeds, advertised []string
	for addr, f := range w.failing {
		if time.Since(f.since) < d {
			continue
		}
		if slices.Contains(w.seeds, addr) {
			seeds = append(seeds, addr)
		} else {
			advertised = append(advertised, addr)
		}
	}
	addrs := seeds
	if len(addrs) == 0 {
		addrs = advertised
	}
	if len(addrs) == 0 {
		return nil
	}
	slices.Sort(addrs)
	return &UnreachableError{Brokers: addrs, Advertised: len(seeds) == 0, Timeout: timeout, Err: w.failing[addrs[0]].err}
}

// clientOpts are the options of a client that checks its brokers with w
// and gives up a connection attempt after timeout (0: kgo's default).
func (w *connWatch) clientOpts(timeout time.Duration) []kgo.Opt {
	opts := []kgo.Opt{kgo.WithHooks(w)}
	if timeout > 0 && timeout < 10*time.Second {
		opts = append(opts, kgo.DialTimeout(timeout))
	}
	return opts
}

// checkTopic asks the cluster for topic's metadata, within timeout: it
// fails with an UnreachableError when the brokers cannot be reached or do
// not answer, and with a TopicNotFoundError when the topic does not exist.
// With create, the request asks the cluster to create the topic, as a
// producer's does: a cluster that allows it then creates it.
func (w *connWatch) checkTopic(ctx context.Context, cl *kgo.Client, topic string, create bool, timeout time.Duration) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = create
	// A broker that is starting refuses connections for a while: ask
	// again until the timeout.
	var resp *kmsg.MetadataResponse
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		var err error
		if resp, err = req.RequestWith(rctx, cl); err == nil {
			break
		}
		select {
		case <-rctx.Done():
		case <-time.After(backoff):
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if u := w.unreachable(0, timeout); u != nil {
			return u
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return &UnreachableError{Brokers: w.seeds, Timeout: timeout}
		}
		return fmt.Errorf("metadata of topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case err == nil, errors.Is(err, kerr.LeaderNotAvailable): // being created
			return nil
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			return &TopicNotFoundError{Topic: topic, Brokers: w.seeds, AutoCreate: create}
		default:
			return fmt.Errorf("topic %s: %w", topic, err)
		}
	}
	return fmt.Errorf("metadata of topic %s: the broker left the topic out of its answer", topic)
}
