package host

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddy-streams/eddy/state"
)

// How a restore (Node.restoreFromLog) reads and writes. One goroutine
// fetches the changelog partition and hands each poll's changes to the
// restoring goroutine through a queue of restoreQueue polls; that one
// writes them to the store, the polls that are ready in one Badger write
// batch of up to restoreBatchBytes, with the checkpoint of the last.
//
// # Memory
//
// A restore holds at most about (2 + restoreQueue) × restoreFetchBytes +
// restoreBatchBytes + restoreFetchBytes of records, 36 MiB: franz-go's
// fetch in flight (or the one it buffers), the poll the fetching goroutine
// is turning into changes, the queue, and the batch being built (which can
// pass restoreBatchBytes by one poll). These are sizes on the wire: a fetch
// can pass restoreFetchBytes by one record batch (a broker returns the
// first batch whole), and compressed batches (franz-go's producers compress
// with snappy by default) take more once decompressed.
//
// # Why these sizes
//
// BenchmarkRestore (BENCHMARKS.md, "Restore speed"), with its broker in
// process: fetching while the previous batch is written is most of the
// gain (the fetches no longer wait on the writes, nor the writes on the
// fetches). Fetches of 4 MiB rather than a consumer's 1 MiB a partition
// made the restore about 10% faster again (larger polls make larger
// batches; Badger alone is not faster with them, so the cause is not
// pinned down), though a read alone was faster with 1 MiB fetches, in
// process; 16 MiB gained nothing more in a noisier run. The batch bound lets a batch take the whole queue without
// holding more.
//
// # Why not Badger's StreamWriter
//
// It would write an empty store's sorted tables directly, but it needs its
// keys in order and each once (a changelog's are in neither), and it owns
// the whole database, which holds every store of the node: Prepare drops
// it, PrepareIncremental stops every other write to it until it is done.
const (
	// restoreFetchBytes is the most a restore's fetch asks for
	// (FetchMaxBytes and FetchMaxPartitionBytes: it reads one partition).
	restoreFetchBytes = 4 << 20
	// restoreQueue is how many polls the fetching goroutine keeps ready
	// ahead of the writes.
	restoreQueue = 2
	// restoreBatchBytes is the size of keys and values past which the
	// polls read so far are written in one batch.
	restoreBatchBytes = 16 << 20
)

// restoreChunk is one poll of a restore: the changes it read, in order,
// and the offset after its last record (data, aborted or marker).
type restoreChunk struct {
	changes []state.Change
	next    int64
}

// restoreBatch is the changes of one or more polls, written together with
// the checkpoint of the last one: a restore stopped between two batches
// leaves the store with every change up to its checkpoint and none after.
// (A process killed inside a batch's write can leave part of it written,
// as Badger commits a large batch in several transactions, the checkpoint
// in the last: the next restore writes that part again from the
// checkpoint, ending where the changelog does.) Its zero value is empty.
type restoreBatch struct {
	changes []state.Change
	bytes   int   // of keys and values
	next    int64 // checkpoint: the next of the last poll added
	polls   int
	skipped int // changes the store cannot hold (state.Store.Restorable)
}

// add appends the changes of c that restorable accepts and moves the
// checkpoint to c's; it returns the batch's size in bytes. A poll without
// changes (markers, aborted records) still moves the checkpoint.
func (b *restoreBatch) add(c restoreChunk, restorable func(key, value []byte) bool) int {
	for _, ch := range c.changes {
		if !restorable(ch.Key, ch.Value) {
			// Badger would refuse it and every restore with it: a record no
			// node of this version writes (older ones did, before the state
			// limits), or a forged one.
			b.skipped++
			continue
		}
		b.changes = append(b.changes, ch)
		b.bytes += len(ch.Key) + len(ch.Value)
	}
	b.next = c.next
	b.polls++
	return b.bytes
}

// reset empties the batch, keeping its memory.
func (b *restoreBatch) reset() {
	clear(b.changes) // let go of the fetches' buffers
	*b = restoreBatch{changes: b.changes[:0]}
}

// writeRestore receives the polls of a restore on chunks until it is
// closed, and writes them in batches: whatever is received when no more is
// ready, or as soon as a batch reaches bound bytes of keys and values. It
// waits for chunks only with nothing to write, so that the writes go on
// while the next polls are fetched. It returns the first error of write,
// or ctx's error (writing nothing more) once ctx is done; what was received
// and not yet written is then dropped, and the store's checkpoint stays
// where the last batch written left it.
func writeRestore(ctx context.Context, chunks <-chan restoreChunk, bound int, restorable func(key, value []byte) bool, write func(*restoreBatch) error) error {
	var b restoreBatch
	flush := func() error {
		if err := write(&b); err != nil {
			return err
		}
		b.reset()
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return err // before anything ready: select picks at random
		}
		var c restoreChunk
		var ok bool
		if b.polls == 0 {
			select {
			case c, ok = <-chunks:
			case <-ctx.Done():
				return ctx.Err()
			}
		} else {
			select {
			case c, ok = <-chunks:
			default:
				if err := flush(); err != nil {
					return err
				}
				continue
			}
		}
		if !ok {
			break
		}
		if b.add(c, restorable) >= bound {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if b.polls > 0 {
		return flush()
	}
	return nil
}

// restoreFetch is a goroutine reading one changelog partition for a
// restore: it sends each poll that read records on chunks, in order, and
// closes chunks when it stops (at the end, on an error or when its context
// is done). Its owner calls stop (always) and wait (for the error).
type restoreFetch struct {
	chunks <-chan restoreChunk
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
}

// startRestoreFetch starts reading from cl, which consumes partition part
// of topic from next, until end (< 0: until the partition's stable end).
// Records from upTo on (upTo >= 0) are not read. answers counts the fetch
// answers cl receives (cl's hook).
func startRestoreFetch(ctx context.Context, cl *kgo.Client, answers *fetchAnswers, topic string, part int32, next, end, upTo int64) *restoreFetch {
	ctx, cancel := context.WithCancel(ctx)
	chunks := make(chan restoreChunk, restoreQueue)
	f := &restoreFetch{chunks: chunks, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		defer close(chunks)
		r := changelogReader{cl: cl, adm: kadm.NewClient(cl), answers: answers, topic: topic, part: part}
		f.err = r.fetch(ctx, next, end, upTo, chunks)
	}()
	return f
}

// stop stops the goroutine and waits for it; the client may be closed
// after. It may be called more than once.
func (f *restoreFetch) stop() {
	f.cancel()
	<-f.done
}

// wait waits until the goroutine has stopped (chunks is closed and drained
// first, or it is stopped) and returns why: nil at the end of the range.
func (f *restoreFetch) wait() error {
	<-f.done
	return f.err
}

// fetchAnswers counts the fetch answers a restore's client received
// (kgo.HookBrokerRead): a poll that returns nothing is a broker that
// answered with nothing to deliver, or a fetch not answered yet.
type fetchAnswers struct{ n atomic.Int64 }

// OnBrokerRead implements kgo.HookBrokerRead.
func (a *fetchAnswers) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.Fetch) && err == nil {
		a.n.Add(1)
	}
}

// changelogReader reads one changelog partition for a restore.
type changelogReader struct {
	cl      *kgo.Client
	adm     *kadm.Client
	answers *fetchAnswers
	topic   string
	part    int32
}

// restoreAnsweredEmpty is how many polls in a row that found nothing,
// each with a fetch answer from the broker, end a restore below the
// partition's stable end: the broker has nothing there to give (a tail of
// records compaction removed, transaction markers among them).
const restoreAnsweredEmpty = 5

// fetch is the fetching goroutine's loop; see restoreFromLog.
//
// When the restore is over is not "a poll found nothing": a poll also finds
// nothing when the broker is slow to answer (a busy broker or host, a fetch
// held up), and a restore that stopped then would go on with part of its
// state, silently. So after a poll that found nothing, the reader lists the
// partition's last stable offset: at or past it, the restore is over (what
// follows is an open transaction's records, which are not state yet).
// Below it, records are there to read, and the reader keeps polling — for
// as long as it takes, unless the broker keeps answering with nothing to
// give (restoreAnsweredEmpty polls in a row, each with an answer): then no
// record is left below the stable end (compaction removed the tail).
func (r *changelogReader) fetch(ctx context.Context, next, end, upTo int64, chunks chan<- restoreChunk) error {
	wait := 5 * time.Second // the first fetch also looks up the partition
	answeredEmpty := 0
	for end < 0 || next < end {
		pctx, cancel := context.WithTimeout(ctx, wait)
		wait = 200 * time.Millisecond
		answered := r.answers.n.Load()
		fetches := r.cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		c := restoreChunk{changes: make([]state.Change, 0, fetches.NumRecords())}
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			for _, rec := range fp.Records {
				if upTo >= 0 && rec.Offset >= upTo {
					next = max(next, upTo) // the caller's limit, inside this fetch
					break
				}
				next = rec.Offset + 1
				if rec.Attrs.IsControl() {
					continue
				}
				c.changes = append(c.changes, state.Change{Key: rec.Key, Value: rec.Value, Deleted: rec.Value == nil})
			}
		})
		if fetches.NumRecords() > 0 { // data or markers: the checkpoint moves
			answeredEmpty = 0
			c.next = next
			select {
			case chunks <- c:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		stable, err := r.stableEnd(ctx)
		if err != nil {
			return err
		}
		if upTo >= 0 {
			stable = min(stable, upTo)
		}
		if next >= stable {
			return nil
		}
		if r.answers.n.Load() > answered {
			answeredEmpty++
			if answeredEmpty >= restoreAnsweredEmpty {
				return nil
			}
		} else {
			answeredEmpty = 0 // the broker has not answered: wait for it
		}
	}
	return nil
}

// stableEnd lists the partition's last stable offset: where a
// read_committed reader ends now.
func (r *changelogReader) stableEnd(ctx context.Context) (int64, error) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ends, err := r.adm.ListCommittedOffsets(lctx, r.topic)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("stable end: %w", err)
	}
	o, ok := ends.Lookup(r.topic, r.part)
	if !ok {
		return 0, fmt.Errorf("stable end: partition %d not listed", r.part)
	}
	if o.Err != nil {
		return 0, fmt.Errorf("stable end: %w", o.Err)
	}
	return o.Offset, nil
}
