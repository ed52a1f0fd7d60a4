package nxbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/nexmark"
	"github.com/eddy-streams/eddy/runtime"
)

// TestRunKafka runs queries Kafka to Kafka through an embedded broker (or
// the Apache Kafka broker EDDY_TEST_KAFKA names) and
// checks their output against the reference: q1 with both guarantees, the
// native functions and the Go guest, q12 and q16, whose windows close
// only thanks to the end markers, q13, whose side input table is loaded
// before the node starts, and q9 and q6, whose auctions close at timers.
func TestRunKafka(t *testing.T) {
	const n = 20_000
	evs, err := Events(n)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := runtime.NewEngine(runtime.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	testdata, _ := filepath.Abs("../../testdata")
	for _, tc := range []struct {
		name      string
		query     string
		native    bool
		guarantee host.Delivery
	}{
		{"q1/native/exactly_once", "q1", true, host.ExactlyOnce},
		{"q1/native/at_least_once", "q1", true, host.AtLeastOnce},
		{"q1/go/exactly_once", "q1", false, host.ExactlyOnce},
		{"q12/native", "q12", true, host.ExactlyOnce},
		// Three stages, two aggregates: the hot items come out of the pipeline.
		{"q5/native", "q5", true, host.ExactlyOnce},
		// A global table of the side input, written before the node starts.
		{"q13/native", "q13", true, host.ExactlyOnce},
		// A key_by, keyed state and windows of a day, closed by end markers
		// a day later than the events.
		{"q16/native", "q16", true, host.ExactlyOnce},
		// Timers over two topics: auctions close only thanks to the end
		// markers, which must add no row (TestAuctionsCloseBeforeTheEndMarkers).
		{"q9/native", "q9", true, host.ExactlyOnce},
		// Winning bids re-keyed by seller: the stage after the repartition
		// orders them by event time, so its watermark must move with the
		// timed stage's, auctions included, though only bid batches fire.
		{"q6/native", "q6", true, host.ExactlyOnce},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var brokers []string // an embedded broker of RunKafka's own
			if testkafka.Real() {
				brokers = testkafka.Start(t).Brokers()
			}
			rep, err := RunKafka(ctx, Options{Query: tc.query, Events: n, Native: tc.native, Guarantee: tc.guarantee,
				Testdata: testdata, Keep: true, Engine: eng, DataDir: t.TempDir()}, brokers)
			if err != nil {
				t.Fatal(err)
			}
			if err := Queries[tc.query].Check(evs, rep.Out); err != nil {
				t.Fatal(err)
			}
			if rep.Outputs == 0 || rep.Events != n || rep.EventsPerSec <= 0 || rep.P99 < rep.P50 || rep.CPU <= 0 {
				t.Fatalf("report %+v", rep)
			}
			t.Logf("%.0f events/s, p50 %s, p99 %s, %.1f allocs/event, %d outputs, %s CPU", rep.EventsPerSec, rep.P50, rep.P99,
				rep.AllocsPerEvent, rep.Outputs, rep.CPU)
		})
	}
}

func TestWriteEvents(t *testing.T) {
	const n = 5_000
	var buf bytes.Buffer
	rep, err := WriteEvents(context.Background(), &buf, n)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Events(n)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	lines := 0
	for sc.Scan() {
		ev, err := nexmark.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		if ev.Kind() != evs[lines].Kind() || ev.Key() != evs[lines].Key() {
			t.Fatalf("line %d: %+v, want %+v", lines+1, ev, evs[lines])
		}
		lines++
	}
	if lines != n || rep.Events != n {
		t.Fatalf("%d lines, report %d events; want %d", lines, rep.Events, n)
	}
}

func TestGenerate(t *testing.T) {
	const n = 5_000
	brokers := testkafka.StartPartitions(t, 2).Brokers()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Generate(ctx, brokers, GenOptions{Events: n, Prefix: "g-", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Events(n)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, ev := range evs {
		want["g-"+topicOf(ev)]++
	}
	for topic, w := range want {
		if rep.Topics[topic] != int64(w) {
			t.Errorf("report: %s %d records, want %d", topic, rep.Topics[topic], w)
		}
		if parts, err := host.PartitionCount(ctx, brokers, topic); err != nil || parts != 3 {
			t.Errorf("%s: %d partitions (%v), want 3", topic, parts, err)
		}
		got, err := host.Consume(ctx, brokers, topic, host.ConsumeOptions{Max: w, Idle: 5 * time.Second},
			func(r abi.Record, _ host.Meta) error {
				ev, err := nexmark.Decode(r.Value)
				if err == nil && "g-"+topicOf(ev) != topic {
					err = errors.New("wrong topic")
				}
				return err
			})
		if err != nil || got != w {
			t.Errorf("%s: read %d records (%v), want %d", topic, got, err, w)
		}
	}
}

// TestEndMarkersReachEveryPartition checks that keyFor's keys land where it
// says, as the producer partitions them.
func TestEndMarkersReachEveryPartition(t *testing.T) {
	brokers := testkafka.StartPartitions(t, 5).Brokers()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := host.CreateTopics(ctx, brokers, 5, "ends"); err != nil {
		t.Fatal(err)
	}
	p := int32(0)
	if _, err := host.Produce(ctx, brokers, "ends", func() (abi.Record, error) {
		if p == 5 {
			return abi.Record{}, io.EOF
		}
		p++
		return endMarker(TopicBids, p-1, 5, 1), nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	if _, err := host.Consume(ctx, brokers, "ends", host.ConsumeOptions{Max: 5, Idle: 5 * time.Second},
		func(r abi.Record, m host.Meta) error {
			if string(r.Key) != string(keyFor(m.Partition, 5)) {
				t.Errorf("key %s in partition %d", r.Key, m.Partition)
			}
			seen[m.Partition] = true
			return nil
		}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 5 {
		t.Fatalf("markers in partitions %v, want all 5", seen)
	}
}
