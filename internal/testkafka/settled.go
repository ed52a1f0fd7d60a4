package testkafka

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/internal/await"
)

// AwaitSettled waits until no record of topics is behind an open
// transaction: each partition's last stable offset has reached its end, so
// a read_committed reader sees everything committed. A node killed (or a
// client closed) in the middle of a transaction leaves it open until the
// broker's transaction timeout; a reader that does not wait for that stops
// at the transaction's first record. If the wait outlasts the test's
// deadline, the failure names the producers whose transactions are open
// and the transactional ids the brokers know, so that the one holding the
// topics can be told apart from the rest.
func AwaitSettled(t testing.TB, brokers []string, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	await.Until(t, 200*time.Millisecond, func() bool { return behindOpen(adm, topics) == 0 },
		func() string {
			return fmt.Sprintf("%d records of %v are behind an open transaction; %s",
				behindOpen(adm, topics), topics, openTransactions(adm, topics))
		})
}

// behindOpen is how many records of topics are past their partitions'
// last stable offsets (-1 if the brokers could not say).
func behindOpen(adm *kadm.Client, topics []string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return -1
	}
	stable, err := adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return -1
	}
	var n int64
	ends.Each(func(e kadm.ListedOffset) {
		s, _ := stable.Lookup(e.Topic, e.Partition)
		n += e.Offset - s.Offset
	})
	return n
}

// openTransactions describes the producers with a transaction open on
// topics and the transactional ids the brokers hold, for a failure report.
func openTransactions(adm *kadm.Client, topics []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	set := kadm.TopicsSet{}
	for _, topic := range topics {
		set.Add(topic)
	}
	if described, err := adm.DescribeProducers(ctx, set); err != nil {
		fmt.Fprintf(&b, "producers: %v; ", err)
	} else {
		var open []string
		described.EachProducer(func(p kadm.DescribedProducer) {
			if p.CurrentTxnStartOffset >= 0 {
				open = append(open, fmt.Sprintf("%s/%d producer %d epoch %d from offset %d (last write %s)",
					p.Topic, p.Partition, p.ProducerID, p.ProducerEpoch, p.CurrentTxnStartOffset,
					time.UnixMilli(p.LastTimestamp).UTC().Format(time.RFC3339Nano)))
			}
		})
		slices.Sort(open)
		fmt.Fprintf(&b, "open on the topics: %v; ", open)
	}
	if txns, err := adm.ListTransactions(ctx, nil, nil); err != nil {
		fmt.Fprintf(&b, "transactions: %v", err)
	} else {
		var all []string
		txns.Each(func(l kadm.ListedTransaction) {
			all = append(all, fmt.Sprintf("%s (producer %d, %s)", l.TxnID, l.ProducerID, l.State))
		})
		slices.Sort(all)
		fmt.Fprintf(&b, "transactions: %v", all)
	}
	return b.String()
}
