package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
)

// toABI converts a Kafka record to an ABI record (views, not copies).
func toABI(r *kgo.Record) abi.Record {
	a := abi.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
	if len(r.Headers) > 0 {
		a.Headers = make([]abi.Header, len(r.Headers))
		for i, h := range r.Headers {
			a.Headers[i] = abi.Header{Key: h.Key, Value: h.Value}
		}
	}
	return a
}

// toKafka converts an ABI record to a Kafka record for topic, copying bytes
// (the ABI record may point into buffers that are reused).
func toKafka(topic string, a *abi.Record) *kgo.Record { return toKafkaWith(topic, a, nil) }

// toKafkaWith is toKafka with extra headers after the record's own (not
// copied: they must not change). The key, value and header values share
// one allocation.
func toKafkaWith(topic string, a *abi.Record, extra []kgo.RecordHeader) *kgo.Record {
	r := &kgo.Record{Topic: topic, Timestamp: time.UnixMilli(a.Timestamp)}
	size := len(a.Key) + len(a.Value)
	for _, h := range a.Headers {
		size += len(h.Value)
	}
	buf := make([]byte, 0, size)
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		at := len(buf)
		buf = append(buf, b...)
		return buf[at:len(buf):len(buf)]
	}
	r.Key, r.Value = take(a.Key), take(a.Value)
	if n := len(a.Headers) + len(extra); n > 0 {
		r.Headers = make([]kgo.RecordHeader, len(a.Headers), n)
		for i, h := range a.Headers {
			r.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: take(h.Value)}
		}
		r.Headers = append(r.Headers, extra...)
	}
	return r
}

// toKafkaBatch converts records as toKafkaWith does, with three
// allocations per batch instead of two or three per record: the records,
// their bytes and their headers share slabs, kept alive as long as any
// record of the batch is. Records without headers of their own share extra
// (clipped: appending to their headers copies).
func toKafkaBatch(topic string, recs []abi.Record, extra []kgo.RecordHeader) []kgo.Record {
	size, nh := 0, 0
	for i := range recs {
		a := &recs[i]
		size += len(a.Key) + len(a.Value)
		for _, h := range a.Headers {
			size += len(h.Value)
		}
		if len(a.Headers) > 0 {
			nh += len(a.Headers) + len(extra)
		}
	}
	out := make([]kgo.Record, len(recs))
	buf := make([]byte, 0, size)
	var hs []kgo.RecordHeader
	if nh > 0 {
		hs = make([]kgo.RecordHeader, 0, nh)
	}
	take := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		at := len(buf)
		buf = append(buf, b...)
		return buf[at:len(buf):len(buf)]
	}
	if len(extra) == 0 {
		extra = nil
	}
	extra = slices.Clip(extra)
	for i := range recs {
		a, r := &recs[i], &out[i]
		r.Topic, r.Timestamp = topic, time.UnixMilli(a.Timestamp)
		r.Key, r.Value = take(a.Key), take(a.Value)
		if len(a.Headers) == 0 {
			r.Headers = extra
			continue
		}
		at := len(hs)
		for _, h := range a.Headers {
			hs = append(hs, kgo.RecordHeader{Key: h.Key, Value: take(h.Value)})
		}
		hs = append(hs, extra...)
		r.Headers = hs[at:len(hs):len(hs)]
	}
	return out
}

// RecordSource yields records to produce; it returns io.EOF after the last.
type RecordSource func() (abi.Record, error)

// ProduceOptions configure ProduceWith.
type ProduceOptions struct {
	// Progress, if set, is called with the count of records written every
	// 10,000 records and once at the end.
	Progress func(n int)
	// ConnectTimeout, when positive, bounds the wait for brokers that
	// cannot be reached. The topic's metadata is asked for first (asking
	// the cluster to create the topic, as a producer does): no answer
	// within ConnectTimeout fails with an UnreachableError, a topic that
	// does not exist and is not created with a TopicNotFoundError. Later,
	// records waiting that long for an acknowledgement while a broker
	// cannot be reached fail with an UnreachableError naming it. Zero
	// waits as long as ctx allows.
	ConnectTimeout time.Duration
}

// Produce writes every record from next to topic, keyed (Kafka's default
// partitioner: murmur2 of the key), waits until all are acknowledged, and
// reports progress every 10,000 records. It returns how many were written.
// It waits for unreachable brokers as long as ctx allows; ProduceWith can
// bound that.
func Produce(ctx context.Context, brokers []string, topic string, next RecordSource, progress func(n int)) (int, error) {
	return ProduceWith(ctx, brokers, topic, next, ProduceOptions{Progress: progress})
}

// ProduceWith is Produce with options.
func ProduceWith(ctx context.Context, brokers []string, topic string, next RecordSource, opts ProduceOptions) (int, error) {
	watch := newConnWatch(brokers)
	cl, err := kgo.NewClient(append(watch.clientOpts(opts.ConnectTimeout), kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.ProducerLinger(5*time.Millisecond), kgo.AllowAutoTopicCreation())...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if opts.ConnectTimeout > 0 {
		if err := watch.checkTopic(ctx, cl, topic, true, opts.ConnectTimeout); err != nil {
			return 0, fmt.Errorf("produce to %s: %w", topic, err)
		}
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var (
		n       int
		failure = make(chan error, 1)
		// pending counts the records not acknowledged yet; acked is
		// when the last acknowledgement came (UnixNano).
		pending, acked atomic.Int64
	)
	acked.Store(time.Now().UnixNano())
	if opts.ConnectTimeout > 0 {
		go watchAcks(ctx, stop, watch, &pending, &acked, opts.ConnectTimeout)
	}
	// stopped returns why ctx ended: the watch's error, or ctx's own.
	stopped := func(err error) error {
		if cause := context.Cause(ctx); cause != nil && errors.Is(err, ctx.Err()) {
			err = cause
		}
		return fmt.Errorf("produce to %s: %w", topic, err)
	}
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		pending.Add(1)
		cl.Produce(ctx, toKafka(topic, &rec), func(_ *kgo.Record, err error) {
			acked.Store(time.Now().UnixNano())
			pending.Add(-1)
			if err != nil {
				select {
				case failure <- err:
				default:
				}
			}
		})
		n++
		if opts.Progress != nil && n%10000 == 0 {
			opts.Progress(n)
		}
		select {
		case err := <-failure:
			return n, stopped(err)
		default:
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return n, stopped(err)
	}
	select {
	case err := <-failure:
		return n, stopped(err)
	default:
	}
	if opts.Progress != nil {
		opts.Progress(n)
	}
	return n, nil
}

// watchAcks stops a produce (stop) when records have waited timeout for an
// acknowledgement while a broker has not been reached for as long: the
// client would otherwise retry for ever.
func watchAcks(ctx context.Context, stop context.CancelCauseFunc, watch *connWatch, pending, acked *atomic.Int64, timeout time.Duration) {
	tick := time.NewTicker(min(timeout/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if pending.Load() == 0 || time.Since(time.Unix(0, acked.Load())) < timeout {
			continue
		}
		if u := watch.unreachable(timeout, timeout); u != nil {
			stop(u)
			return
		}
	}
}

// ConsumeOptions configure Consume.
type ConsumeOptions struct {
	// FromLatest starts at the end instead of the beginning.
	FromLatest bool
	// ReadUncommitted also returns records of open and aborted transactions.
	// The default, read_committed, is what exactly-once consumers see.
	ReadUncommitted bool
	// Max stops after this many records (0: no limit).
	Max int
	// Idle stops after no record arrived for this long (0: never).
	Idle time.Duration
	// ConnectTimeout, when positive, makes Consume ask for the topic's
	// metadata first and fail rather than wait: with an UnreachableError
	// when no broker answers within ConnectTimeout, with a
	// TopicNotFoundError when the topic does not exist. An Idle stop while
	// a broker cannot be reached then fails with an UnreachableError too,
	// instead of reporting an idle topic. Zero waits for the brokers and
	// the topic as long as ctx allows.
	ConnectTimeout time.Duration
}

// Meta is where a consumed record came from.
type Meta struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Consume reads topic without a consumer group and calls fn for each record,
// in order per partition, until ctx ends, Max records were read, or Idle
// passed without a record.
func Consume(ctx context.Context, brokers []string, topic string, opts ConsumeOptions, fn func(abi.Record, Meta) error) (int, error) {
	start := kgo.NewOffset().AtStart()
	if opts.FromLatest {
		start = kgo.NewOffset().AtEnd()
	}
	iso := kgo.ReadCommitted()
	if opts.ReadUncommitted {
		iso = kgo.ReadUncommitted()
	}
	watch := newConnWatch(brokers)
	cl, err := kgo.NewClient(append(watch.clientOpts(opts.ConnectTimeout), kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(start), kgo.FetchIsolationLevel(iso))...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if opts.ConnectTimeout > 0 {
		if err := watch.checkTopic(ctx, cl, topic, false, opts.ConnectTimeout); err != nil {
			if ctx.Err() != nil {
				return 0, nil
			}
			return 0, fmt.Errorf("consume %s: %w", topic, err)
		}
	}
	n := 0
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if opts.Idle > 0 {
			pctx, cancel = context.WithTimeout(ctx, opts.Idle)
		}
		fetches := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return n, nil
		}
		if fetches.Empty() && pctx.Err() != nil {
			if u := watch.unreachable(0, opts.Idle); opts.ConnectTimeout > 0 && u != nil {
				return n, fmt.Errorf("consume %s: idle for %s: %w", topic, opts.Idle, u)
			}
			return n, nil // idle
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = fmt.Errorf("consume %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			return n, ferr
		}
		for it := fetches.RecordIter(); !it.Done(); {
			r := it.Next()
			if err := fn(toABI(r), Meta{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}); err != nil {
				return n, err
			}
			n++
			if opts.Max > 0 && n >= opts.Max {
				return n, nil
			}
		}
	}
}

// CreateTopics creates topics with the given partitions (replication: the
// cluster default), ignoring ones that exist, and waits until each has a
// leader for every partition (topicsReady).
func CreateTopics(ctx context.Context, brokers []string, partitions int32, topics ...string) error {
	return createTopics(ctx, brokers, partitions, nil, topics)
}

// CreateCompactedTopics creates compacted topics with the given partitions,
// ignoring ones that exist, and waits until they are ready (topicsReady).
func CreateCompactedTopics(ctx context.Context, brokers []string, partitions int32, topics ...string) error {
	compact := "compact"
	return createTopics(ctx, brokers, partitions, map[string]*string{"cleanup.policy": &compact}, topics)
}

// PartitionCount returns the largest partition count of the topics, which
// must exist.
func PartitionCount(ctx context.Context, brokers []string, topics ...string) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	details, err := kadm.NewClient(cl).ListTopics(ctx, topics...)
	if err != nil {
		return 0, err
	}
	var parts int32
	for _, t := range topics {
		d, ok := details[t]
		if !ok || d.Err != nil {
			return 0, fmt.Errorf("source topic %s: not found", t)
		}
		parts = max(parts, int32(len(d.Partitions)))
	}
	return parts, nil
}

func createTopics(ctx context.Context, brokers []string, partitions int32, configs map[string]*string, topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	create := func(ctx context.Context, topics []string) error {
		res, err := adm.CreateTopics(ctx, partitions, -1, configs, topics...)
		if err != nil {
			return err
		}
		for _, r := range res.Sorted() {
			if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
				return fmt.Errorf("create topic %s: %w", r.Topic, r.Err)
			}
		}
		return nil
	}
	if err := create(ctx, topics); err != nil {
		return err
	}
	return topicsReady(ctx, adm, topics, create)
}

// topicReadyTimeout bounds the wait for created topics to be served.
const topicReadyTimeout = 30 * time.Second

// topicsReady waits until the broker's metadata lists every partition of
// topics with a leader. Kafka answers CreateTopics once the controller has
// the topic, before the brokers serve it: a ListOffsets or a fetch right
// after gets UNKNOWN_TOPIC_OR_PARTITION or leaves the partition out (the
// embedded broker serves a topic as soon as it creates it). A topic being
// deleted when it was created again answered TOPIC_ALREADY_EXISTS and then
// vanishes; under load Kafka has also been seen to leave a topic unserved
// for seconds after two nodes created it at once. A topic that stays
// unknown or unserved is therefore created again (create) every second: for
// a topic that exists that is a no-op answered TOPIC_ALREADY_EXISTS.
func topicsReady(ctx context.Context, adm *kadm.Client, topics []string, create func(context.Context, []string) error) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, topicReadyTimeout)
	defer cancel()
	lastCreate := time.Now()
	for {
		md, err := adm.Metadata(ctx, topics...)
		missing := ""
		if err != nil {
			missing = err.Error()
		}
		var unserved []string
		for _, t := range topics {
			if d, ok := md.Topics[t]; err == nil && (!ok || d.Err != nil || len(d.Partitions) == 0) {
				unserved = append(unserved, t)
			}
		}
		if len(unserved) > 0 && create != nil && time.Since(lastCreate) >= time.Second {
			lastCreate = time.Now()
			if err := create(ctx, unserved); err != nil && ctx.Err() == nil {
				return err
			}
		}
		for _, t := range topics {
			if missing != "" {
				break
			}
			d, ok := md.Topics[t]
			switch {
			case !ok || len(d.Partitions) == 0 && d.Err == nil:
				missing = "topic " + t + " not served yet"
			case d.Err != nil:
				missing = fmt.Sprintf("topic %s not served yet: %v", t, d.Err)
			default:
				for _, p := range d.Partitions {
					if p.Err != nil || p.Leader < 0 {
						missing = fmt.Sprintf("topic %s partition %d has no leader yet", t, p.Partition)
						break
					}
				}
			}
		}
		if missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("created topics not ready (%w): %s", parent.Err(), missing)
			}
			return fmt.Errorf("created topics not ready after %s: %s", topicReadyTimeout, missing)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
