package host

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// Output records too large to produce.
//
// # Why every produced record is measured first
//
// A record the producer refuses (larger than its batch limit, or than the
// topic's max.message.bytes) fails its produce, and a failed produce stops
// the node: the offsets are not committed, the same input makes the same
// output after a restart, and the node stops again, for good. A guest can
// make such a record out of a small input (a map that repeats its value),
// and so can the host (a key_by whose key is a big field, a join that nests
// both sides, an accumulator that grows). So the node measures every record
// before it hands it to the producer, against the limit of its topic, and
// turns one that does not fit into a dead letter of the input record it
// comes from (code output_too_large), as if the step had failed on it; the
// batch's other records proceed.

// causeTooLarge is the dead-letter code of a record whose output, or whose
// state change, is larger than its topic accepts.
const causeTooLarge runtime.Cause = "output_too_large"

// causeBadTimestamp is the dead-letter code of a record whose output has a
// timestamp its topic refuses.
//
// Apache Kafka refuses a record stamped more than
// message.timestamp.after.max.ms ahead of the broker's clock (1 hour by
// default) or more than message.timestamp.before.max.ms behind it
// (unbounded by default): INVALID_TIMESTAMP, which, like a record too
// large, would stop the node on the same input after every restart. A
// guest can set any output timestamp, and window results carry their
// window's end. The node reads both bounds at start and dead-letters the
// input of an output outside them.
const causeBadTimestamp runtime.Cause = "output_timestamp"

// timeBounds are the record timestamps a topic accepts, relative to now;
// a negative bound is none.
type timeBounds struct {
	before, after time.Duration
}

// timestampMargin keeps timestamps this far inside their topic's bounds:
// the broker's clock is not the node's, and a produce takes time.
const timestampMargin = time.Minute

// badTimestamp reports whether r's timestamp is outside what its topic
// accepts at now, and if so, why.
func (n *Node) badTimestamp(r *kgo.Record, now time.Time) (string, bool) {
	b, ok := n.topicTimes[r.Topic]
	if !ok {
		return "", false
	}
	switch {
	case b.after >= 0 && r.Timestamp.After(now.Add(b.after-timestampMargin)):
		return fmt.Sprintf("timestamp %s is more than %s ahead of now (%s), the most topic %s accepts (message.timestamp.after.max.ms, less a margin of %s)",
			r.Timestamp.UTC().Format(time.RFC3339Nano), b.after, now.UTC().Format(time.RFC3339), r.Topic, timestampMargin), true
	case b.before >= 0 && r.Timestamp.Before(now.Add(-b.before+timestampMargin)):
		return fmt.Sprintf("timestamp %s is more than %s before now (%s), the most topic %s accepts (message.timestamp.before.max.ms, less a margin of %s)",
			r.Timestamp.UTC().Format(time.RFC3339Nano), b.before, now.UTC().Format(time.RFC3339), r.Topic, timestampMargin), true
	}
	return "", false
}

// restamp gives r, a record about other records (a dead letter, a progress
// marker), which cannot itself be dead-lettered, the current time when its
// own is outside what its topic accepts, keeping its own time in the header
// eddy.timestamp.
func (n *Node) restamp(r *kgo.Record) {
	now := time.Now()
	if _, bad := n.badTimestamp(r, now); bad {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "eddy.timestamp", Value: []byte(strconv.FormatInt(r.Timestamp.UnixMilli(), 10))})
		r.Timestamp = now
	}
}

// unproducible reports whether the broker would refuse r, a record of the
// kind what names (an "output record"): too large, or a timestamp out of
// its topic's range; if so, why and the dead-letter code.
func (n *Node) unproducible(r *kgo.Record, what string, now time.Time) (string, runtime.Cause, bool) {
	if why, over := n.tooLarge(r, what); over {
		return why, causeTooLarge, true
	}
	if why, bad := n.badTimestamp(r, now); bad {
		return what + ": " + why, causeBadTimestamp, true
	}
	return "", "", false
}

// DefaultMaxRecordBytes is the producer's limit on one record batch, and so
// on one record: franz-go's default ProducerBatchMaxBytes, 1,000,012 bytes
// (Kafka's default max.message.bytes less the batch framing).
const DefaultMaxRecordBytes = 1_000_012

// minRecordLimit is the smallest batch limit franz-go accepts.
const minRecordLimit = 512

// recordLimit is the largest record the node produces to topic, as
// produceSize counts it: the producer's limit (NodeConfig.MaxRecordBytes),
// or the topic's max.message.bytes when the node learnt it at start and it
// is smaller. The producer batches a topic's records up to the same limit
// (clientOpts), so that many small records do not make a batch the broker
// refuses either.
func (n *Node) recordLimit(topic string) int {
	l := n.cfg.MaxRecordBytes
	if m, ok := n.topicMax[topic]; ok && m < l {
		l = m
	}
	return max(l, minRecordLimit)
}

// tooLarge reports whether r is larger than its topic accepts, and if so,
// why, naming what r is (an "output record", an "accumulator").
func (n *Node) tooLarge(r *kgo.Record, what string) (string, bool) {
	size, limit := produceSize(r), n.recordLimit(r.Topic)
	if size <= limit {
		return "", false
	}
	return fmt.Sprintf("%s of %d bytes exceeds the %d-byte limit of topic %s", what, size, limit, r.Topic), true
}

// tooLargeError is the failure, at step s, of a record whose output does
// not fit.
func (t *task) tooLargeError(s int, reason string) *runtime.Error {
	return t.unproducibleError(s, causeTooLarge, reason)
}

// unproducibleError is the failure, at step s, of a record whose output the
// broker would refuse (cause says why: unproducible).
func (t *task) unproducibleError(s int, cause runtime.Cause, reason string) *runtime.Error {
	kind := abi.KindProcess
	switch t.n.p.Steps[s].Kind {
	case StepAggregate:
		kind = abi.KindAggregate
	case StepJoin:
		kind = abi.KindJoin
	case StepKeyBy:
		kind = abi.KindKey
	}
	return &runtime.Error{Function: t.exec.Function(s), Kind: kind, Cause: cause, Index: -1, Group: -1, Reason: reason}
}

// learnTopicLimits reads the max.message.bytes of the topics the node
// writes, once at start, into n.topicMax. A topic it cannot describe (not
// created yet, no permission to describe configs) keeps the producer's
// limit; a broker that refuses a record anyway fails its produce (see
// produce).
func (n *Node) learnTopicLimits(ctx context.Context) {
	topics := []string{n.p.DeadLetter.Topic, n.p.Late.Topic}
	if n.p.Sink.Topic != "" {
		topics = append(topics, n.p.Sink.Topic, ShadowTopic(n.p.Sink.Topic))
	}
	for _, st := range n.stages {
		if !st.Last {
			topics = append(topics, st.Output)
		}
	}
	topics = append(topics, changelogTopics(n.p)...)
	for _, s := range n.p.Steps {
		if s.To != "" {
			topics = append(topics, s.To)
		}
	}
	n.topicMax, n.topicTimes = map[string]int{}, map[string]timeBounds{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.cfg.Brokers...))
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var known []string
	if details, err := kadm.NewClient(cl).ListTopics(ctx, topics...); err == nil {
		for _, t := range topics {
			if d, ok := details[t]; ok && d.Err == nil {
				known = append(known, t)
			}
		}
	}
	if len(known) == 0 {
		return
	}
	cfgs, err := kadm.NewClient(cl).DescribeTopicConfigs(ctx, known...)
	if err != nil {
		n.log.Warn("cannot read the topics' max.message.bytes; records are bounded by the producer's limit",
			"limit", n.cfg.MaxRecordBytes, "error", err)
		return
	}
	for _, rc := range cfgs {
		if rc.Err != nil {
			continue
		}
		bounds, bounded, logAppend := timeBounds{before: -1, after: -1}, false, false
		for _, c := range rc.Configs {
			if c.Value == nil {
				continue
			}
			switch c.Key {
			case "max.message.bytes":
				if v, err := strconv.Atoi(*c.Value); err == nil && v > 0 {
					n.topicMax[rc.Name] = v
				}
			case "message.timestamp.after.max.ms", "message.timestamp.before.max.ms":
				// Kafka's "unbounded" is Long.MAX_VALUE, beyond a Duration.
				v, err := strconv.ParseInt(*c.Value, 10, 64)
				if err != nil || v < 0 || v > math.MaxInt64/int64(time.Millisecond) {
					continue
				}
				if c.Key == "message.timestamp.after.max.ms" {
					bounds.after = time.Duration(v) * time.Millisecond
				} else {
					bounds.before = time.Duration(v) * time.Millisecond
				}
				bounded = true
			case "message.timestamp.type":
				// LogAppendTime: the broker stamps the records itself.
				logAppend = *c.Value == "LogAppendTime"
			}
		}
		if bounded && !logAppend {
			n.topicTimes[rc.Name] = bounds
		}
	}
}
