package host

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

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
	// restoreSlowPolls is how many polls of 200 ms that find nothing a
	// restore waits when the partition's last stable offset says records
	// are there to read (see fetchChangelog).
	restoreSlowPolls = 25
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

// startRestoreFetch starts reading from cl, which consumes one changelog
// partition from next, until end (< 0: until a poll finds nothing).
// Records from upTo on (upTo >= 0) are not read.
func startRestoreFetch(ctx context.Context, cl *kgo.Client, next, end, upTo int64) *restoreFetch {
	ctx, cancel := context.WithCancel(ctx)
	chunks := make(chan restoreChunk, restoreQueue)
	f := &restoreFetch{chunks: chunks, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		defer close(chunks)
		f.err = fetchChangelog(ctx, cl, next, end, upTo, chunks)
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

// fetchChangelog is the fetching goroutine's loop; see restoreFromLog.
func fetchChangelog(ctx context.Context, cl *kgo.Client, next, end, upTo int64, chunks chan<- restoreChunk) error {
	wait := 5 * time.Second // the first fetch also looks up the partition
	// stable is the partition's last stable offset as the last fetch gave
	// it; slow counts the polls that found nothing below it.
	stable, slow := int64(-1), 0
	for end < 0 || next < end {
		pctx, cancel := context.WithTimeout(ctx, wait)
		wait = 200 * time.Millisecond // what is left past the data is markers
		fetches := cl.PollFetches(pctx)
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
			if fp.Err == nil && len(fp.Records) > 0 { // not a poll's timeout
				stable = fp.LastStableOffset
			}
			for _, r := range fp.Records {
				if upTo >= 0 && r.Offset >= upTo {
					next = max(next, upTo) // the caller's limit, inside this fetch
					break
				}
				next = r.Offset + 1
				if r.Attrs.IsControl() {
					continue
				}
				c.changes = append(c.changes, state.Change{Key: r.Key, Value: r.Value, Deleted: r.Value == nil})
			}
		})
		if fetches.NumRecords() > 0 { // data or markers: the checkpoint moves
			c.next = next
			select {
			case chunks <- c:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// Done at the end offset, or when a poll finds nothing: the rest
		// is aborted records or transaction markers. But a poll that finds
		// nothing below the stable offset the broker gave is a fetch that
		// is late (a busy broker or host; the writes share the machine):
		// wait for it, up to restoreSlowPolls polls.
		if fetches.Empty() {
			if next >= stable || slow == restoreSlowPolls {
				return nil
			}
			slow++
			continue
		}
		slow = 0
	}
	return nil
}
