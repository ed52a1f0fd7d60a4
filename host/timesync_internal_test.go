package host

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// syncPartition is a partition's log in a time-sync test: records with
// timestamps, fetched in chunks.
type syncPartition struct {
	recs    []*kgo.Record
	fetched int
}

func syncLog(topic string, times []int64) *syncPartition {
	p := &syncPartition{}
	for i, ts := range times {
		p.recs = append(p.recs, &kgo.Record{Topic: topic, Offset: int64(i), Timestamp: time.UnixMilli(ts),
			Key: []byte(fmt.Sprintf("k%d", i%3)), Value: []byte(fmt.Sprint(i))})
	}
	return p
}

// twoQueues is the time synchronisation of a stream and a table whose ends,
// when known, are sure for every record (sure: the tests that need a
// listing set it).
func twoQueues(maxIdle time.Duration) *timeSync {
	return &timeSync{maxIdle: maxIdle, queues: []*syncQueue{
		{topic: "stream", fetched: -1, end: -1, sure: math.MaxUint64},
		{topic: "table", table: true, fetched: -1, end: -1, sure: math.MaxUint64},
	}}
}

// TestTimeSyncProperty feeds a stream partition and a table partition, each
// in time order, to a timeSync in random fetch chunks and random
// interleavings, and applies what it releases to a table: every stream
// record must meet, for its key, the last table update with a timestamp up
// to its own (a table update first at equal times), whatever the chunks.
// Every record is released once, in its partition's order.
func TestTimeSyncProperty(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		times := func(n int) []int64 {
			ts, at := make([]int64, n), int64(rng.IntN(5))
			for i := range ts {
				at += int64(rng.IntN(4)) // equal times included
				ts[i] = at
			}
			return ts
		}
		stream, table := syncLog("stream", times(1+rng.IntN(60))), syncLog("table", times(rng.IntN(60)))
		// The reference: by timestamps alone.
		want := map[int64]string{}
		for _, r := range stream.recs {
			v := "none"
			for _, u := range table.recs {
				if string(u.Key) == string(r.Key) && !u.Timestamp.After(r.Timestamp) {
					v = string(u.Value)
				}
			}
			want[r.Offset] = v
		}
		s := twoQueues(time.Hour)
		parts := []*syncPartition{stream, table}
		for i, q := range s.queues {
			q.fetched, q.end = 0, int64(len(parts[i].recs)) // as the assignment's offset listing says
		}
		current := map[string]string{}
		got := map[int64]string{}
		var order [2][]int64
		now := time.Unix(0, 0) // the clock never moves: max_idle never passes
		for done := 0; done < 10000; done++ {
			if p := rng.IntN(2); parts[p].fetched < len(parts[p].recs) {
				k := min(len(parts[p].recs)-parts[p].fetched, 1+rng.IntN(8))
				chunk := parts[p].recs[parts[p].fetched : parts[p].fetched+k]
				parts[p].fetched += k
				s.queues[p].add(chunk, int64(parts[p].fetched), int64(len(parts[p].recs)), true)
			}
			for {
				q, run, late := s.next(now)
				if late != nil {
					t.Fatalf("seed %d: a wait timed out with a clock that does not move", seed)
				}
				if run == nil {
					break
				}
				for _, r := range run {
					if q.table {
						current[string(r.Key)] = string(r.Value)
						order[1] = append(order[1], r.Offset)
						continue
					}
					v, ok := current[string(r.Key)]
					if !ok {
						v = "none"
					}
					got[r.Offset] = v
					order[0] = append(order[0], r.Offset)
				}
			}
		}
		for p, o := range order {
			if len(o) != len(parts[p].recs) {
				t.Fatalf("seed %d: %d of the %s's %d records released", seed, len(o), s.queues[p].topic, len(parts[p].recs))
			}
			for i, off := range o {
				if off != int64(i) {
					t.Fatalf("seed %d: %s released out of order: %v", seed, s.queues[p].topic, o)
				}
			}
		}
		for off, v := range want {
			if got[off] != v {
				t.Fatalf("seed %d: stream record %d (t=%d) met table value %s, want %s", seed, off,
					stream.recs[off].Timestamp.UnixMilli(), got[off], v)
			}
		}
	}
}

// TestTimeSyncMaxIdle: a stream record waits for a lagging table partition
// until max_idle has passed, then goes on without it (reported once); a
// table partition read to its end holds nothing back, and max_idle 0 never
// waits.
func TestTimeSyncMaxIdle(t *testing.T) {
	rec := func(topic string, off, ts int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Offset: off, Timestamp: time.UnixMilli(ts)}
	}
	t0 := time.Unix(1000, 0)
	s := twoQueues(time.Second)
	stream, table := s.queues[0], s.queues[1]
	table.fetched, table.end = 5, 9 // lagging: 4 records not fetched
	stream.add([]*kgo.Record{rec("stream", 0, 100), rec("stream", 1, 200)}, 2, 2, true)
	if _, run, _ := s.next(t0); run != nil {
		t.Fatalf("released %d records while the table lags", len(run))
	}
	if _, run, _ := s.next(t0.Add(999 * time.Millisecond)); run != nil {
		t.Fatal("released before max_idle passed")
	}
	q, run, late := s.next(t0.Add(time.Second))
	if q != stream || len(run) != 2 || late != table {
		t.Fatalf("after max_idle: queue %v, %d records, timed out %v; want the stream's 2 and the table reported", q, len(run), late)
	}
	stream.add([]*kgo.Record{rec("stream", 2, 300)}, 3, 3, true)
	if _, run, late := s.next(t0.Add(2 * time.Second)); len(run) != 1 || late != nil {
		t.Fatalf("the wait, once over, holds nothing back and is reported once: %d records, timed out %v", len(run), late)
	}
	// Table records arrive: the wait is over for good; their turn comes
	// by time.
	table.add([]*kgo.Record{rec("table", 5, 250), rec("table", 6, 400)}, 7, 9, true)
	stream.add([]*kgo.Record{rec("stream", 3, 350)}, 4, 4, true)
	q, run, _ = s.next(t0.Add(3 * time.Second))
	if q != table || len(run) != 1 || run[0].Offset != 5 {
		t.Fatalf("want the table update at 250 first, got %v %d", q, len(run))
	}
	if q, run, _ = s.next(t0.Add(3 * time.Second)); q != stream || len(run) != 1 {
		t.Fatalf("want the stream record at 350 next")
	}
	// The table lags again with its update at 400 queued: the stream is
	// empty and read to its end, so the table goes on.
	if q, run, _ = s.next(t0.Add(3 * time.Second)); q != table || len(run) != 1 {
		t.Fatalf("want the table update at 400: a stream read to its end holds nothing back")
	}
	// max_idle 0: never waits.
	z := twoQueues(0)
	z.queues[1].fetched, z.queues[1].end = 0, 10
	z.queues[0].add([]*kgo.Record{rec("stream", 0, 1)}, 1, 1, true)
	if _, run, _ := z.next(t0); len(run) != 1 {
		t.Fatal("max_idle 0 waited")
	}
}

// TestTimeSyncRewind: rewinding gives each partition's first queued record
// and empties the queues; fetching then counts from there.
func TestTimeSyncRewind(t *testing.T) {
	s := twoQueues(time.Hour)
	s.queues[1].add([]*kgo.Record{{Topic: "table", Offset: 7, LeaderEpoch: 3, Timestamp: time.UnixMilli(9)}, {Topic: "table", Offset: 8}}, 10, 12, true)
	at := s.rewind()
	if len(at) != 1 || at["table"].Offset != 7 || at["table"].Epoch != 3 {
		t.Fatalf("rewind: %v", at)
	}
	if q := s.queues[1]; len(q.recs) != 0 || q.bytes != 0 || q.fetched != 7 || !q.lagging() {
		t.Fatalf("after rewind: %d records, %d bytes, fetched %d", len(q.recs), q.bytes, q.fetched)
	}
	if s.rewind() != nil {
		t.Fatal("a second rewind found records")
	}
}

// TestMaxIdleDefault: an absent max_idle takes DefaultMaxIdle, an explicit
// 0 never waits, and a task waits for the least max_idle of its stage's
// table joins.
func TestMaxIdleDefault(t *testing.T) {
	p, err := ParsePipeline("p.yaml", []byte(`name: p
source: {topics: [in]}
sink: {topic: out}
tables: [{name: a, topic: ta}, {name: b, topic: tb}]
steps:
  - {name: one, kind: join, table: a}
  - {name: two, kind: join, table: b, max_idle: 0s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Steps[0].MaxIdleOrDefault(); d != DefaultMaxIdle {
		t.Fatalf("absent max_idle: %s, want %s", d, DefaultMaxIdle)
	}
	if d := p.Steps[1].MaxIdleOrDefault(); d != 0 {
		t.Fatalf("max_idle: 0s gave %s", d)
	}
	s := newTimeSync(p, p.Stages()[0])
	if s == nil || s.maxIdle != 0 || len(s.queues) != 3 || s.queues[0].table || !s.queues[1].table || !s.queues[2].table {
		t.Fatalf("time sync of the stage: %+v", s)
	}
}

// TestTimeSyncStaleEnd: a partition whose fetching was paused may have
// records the node never heard of, whatever end it last saw: read to that
// end, it still holds the others back until it is fetched again while not
// paused (or its end is listed anew).
func TestTimeSyncStaleEnd(t *testing.T) {
	s := twoQueues(time.Hour)
	stream, table := s.queues[0], s.queues[1]
	stream.fetched, stream.end = 4, 4
	table.fetched, table.end = 0, 1
	table.add([]*kgo.Record{{Topic: "table", Offset: 0, Timestamp: time.UnixMilli(50)}}, 1, 1, true)
	stream.pausedAt()
	if _, run, _ := s.next(time.Unix(0, 0)); run != nil {
		t.Fatal("a table update went ahead of a paused stream partition")
	}
	stream.add(nil, 4, 4, false) // records fetched while paused: still stale
	if _, run, _ := s.next(time.Unix(0, 0)); run != nil {
		t.Fatal("a fetch made while paused made the partition's end current")
	}
	stream.add([]*kgo.Record{{Topic: "stream", Offset: 4, Timestamp: time.UnixMilli(40)}}, 5, 5, true)
	if q, run, _ := s.next(time.Unix(0, 0)); q != stream || len(run) != 1 {
		t.Fatal("want the stream record at 40 first, once the partition is fetched again")
	}
	if q, run, _ := s.next(time.Unix(0, 0)); q != table || len(run) != 1 {
		t.Fatal("want the table update next: the stream is read to its end")
	}
}

// TestTimeSyncPartialPolls models the client and the broker between the
// logs and the queues: records are written to the stream and table
// partitions in time order while a fetch reads one partition, then the
// other (the writer may go on in between: the second partition's records
// and end can be newer than the first's), and polls hand the fetched
// records over at most n at a time, one partition's before the other's, the
// rest waiting in the client. The node lists an empty partition's end when
// records wait for it (releaseAllSync), which the model does at random
// moments. Every stream record must meet, for its key, the last table
// update written before it.
func TestTimeSyncPartialPolls(t *testing.T) {
	for seed := uint64(0); seed < 500; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		// Both logs, written in time order: record i at time i.
		var logs [2][]*kgo.Record
		for i := range 200 {
			p := rng.IntN(2)
			logs[p] = append(logs[p], &kgo.Record{Topic: []string{"stream", "table"}[p], Offset: int64(len(logs[p])),
				Timestamp: time.UnixMilli(int64(i)), Key: []byte(fmt.Sprintf("k%d", rng.IntN(2))), Value: []byte(fmt.Sprint(i))})
		}
		want := map[int64]string{}
		for _, r := range logs[0] {
			v := "none"
			for _, u := range logs[1] {
				if string(u.Key) == string(r.Key) && u.Timestamp.Before(r.Timestamp) {
					v = string(u.Value)
				}
			}
			want[r.Offset] = v
		}
		s := twoQueues(time.Hour)
		for _, q := range s.queues {
			q.fetched, q.end, q.sure = 0, 0, 0
		}
		var listings atomic.Uint64
		stamp := &fetchStamp{listings: &listings}
		var written, fetched [2]int // how much of each log is written, fetched
		write := func(k int) {
			for ; k > 0; k-- {
				next := -1
				for p := range 2 {
					if written[p] < len(logs[p]) && (next < 0 || logs[p][written[p]].Timestamp.Before(logs[next][written[next]].Timestamp)) {
						next = p
					}
				}
				if next < 0 {
					return
				}
				written[next]++
			}
		}
		type part struct {
			p    int
			recs []*kgo.Record
			end  int64
		}
		var buffer []part // fetched, not yet polled
		current := map[string]string{}
		got := map[int64]string{}
		now := time.Unix(0, 0)
		release := func() {
			for {
				q, run, _ := s.next(now)
				if run == nil {
					return
				}
				for _, r := range run {
					if q.table {
						current[string(r.Key)] = string(r.Value)
						continue
					}
					v, ok := current[string(r.Key)]
					if !ok {
						v = "none"
					}
					got[r.Offset] = v
				}
			}
		}
		for step := 0; step < 20000 && len(got) < len(logs[0]); step++ {
			switch rng.IntN(4) {
			case 0: // the writer goes on, in time order across the logs
				write(rng.IntN(20))
			case 1: // a fetch, when the client holds nothing
				if len(buffer) > 0 {
					continue
				}
				first := rng.IntN(2) // the order of partitions in the response
				for i, p := range []int{first, 1 - first} {
					if i == 1 {
						write(rng.IntN(8)) // between the reads of the two partitions
					}
					recs := logs[p][fetched[p]:written[p]]
					for _, r := range recs {
						stamp.OnFetchRecordBuffered(r)
					}
					buffer = append(buffer, part{p, recs, int64(written[p])})
					fetched[p] = written[p]
				}
			case 2: // a poll of at most n records
				n := 1 + rng.IntN(10)
				var polled []part
				for len(buffer) > 0 && n > 0 {
					b := &buffer[0]
					k := min(n, len(b.recs))
					polled = append(polled, part{b.p, b.recs[:k], b.end})
					b.recs, n = b.recs[k:], n-k
					if len(b.recs) == 0 {
						buffer = buffer[1:]
					}
				}
				for _, pp := range polled {
					if len(pp.recs) > 0 {
						s.queues[pp.p].add(pp.recs, pp.recs[len(pp.recs)-1].Offset+1, pp.end, true)
					} else {
						s.queues[pp.p].end = max(s.queues[pp.p].end, pp.end)
					}
				}
				release()
			case 3: // the node lists the end of an empty partition
				p := rng.IntN(2)
				if q := s.queues[p]; len(q.recs) == 0 {
					q.end, q.sure = max(q.end, int64(written[p])), listings.Add(1)
					release()
				}
			}
		}
		if len(got) != len(logs[0]) {
			t.Fatalf("seed %d: %d of the stream's %d records released", seed, len(got), len(logs[0]))
		}
		for off, v := range want {
			if g := got[off]; g != v {
				t.Fatalf("seed %d: stream record %d (t=%d) met table value %s, want %s", seed, off,
					logs[0][off].Timestamp.UnixMilli(), g, v)
			}
		}
	}
}
