// Package join provides the logic of Eddy's joins: stream-table joins
// (Kafka Streams KStream-KTable) and windowed stream-stream joins (Kafka
// Streams KStream-KStream with JoinWindows), with watermarks, lateness,
// matching, emission of unmatched records and buffer expiry. It is pure Go
// with no Kafka, storage or Wasm dependency; the node wires it to those.
// Each [Pair] becomes one item [key, left value, right value] of the
// guest's eddy_join call, with nil for a null key or a missing side.
//
// # Usage
//
// A stream-table join owns a [TableJoin] over a [Table] that the caller
// implements on its state store. Table records update it; stream records
// look it up, in arrival order:
//
//	tj, err := join.NewTableJoin(join.LeftJoin, table)
//	var out join.Output
//	for each record r, in arrival order {
//		if r is from the table topic {
//			err = tj.Update(r) // nil value: delete
//		} else {
//			err = tj.Lookup(r, &out)
//		}
//	}
//	// out.Pairs: (stream record, table value) pairs for eddy_join.
//
// A windowed join owns a [WindowJoin] over a [Buffer] that the caller
// implements on its state store, and feeds it the records of both sides,
// naming each input (a partition of one side) by an id:
//
//	wj, err := join.NewWindowJoin(join.Config{
//		Type:        join.OuterJoin,
//		Before:      5 * time.Second, // left at t meets right in [t-5s, t+5s]
//		After:       5 * time.Second,
//		Grace:       time.Second,     // allowed lateness
//		Disorder:    2 * time.Second, // bounded out-of-orderness
//		IdleTimeout: time.Minute,
//	}, buffer)
//	wj.Assign(0, 1) // left partition p = input 0, right partition p = input 1
//	for each record r of input i {
//		err = wj.Process(side, i, r, &out)
//	}
//	err = wj.Advance(&out) // after each batch, and on a timer
//	// out.Pairs: matched pairs, and unmatched records whose window closed;
//	// out.Late: records for the late-data side output. Then out.Reset().
//
// # Stream-table joins
//
// Each stream record is joined with the table value of its key at the
// moment it is processed; table records never produce output. An inner
// join emits a Pair only when the key has a value, a left join always
// (Right nil when it has none). Null keys never match: a table record with
// a null key is dropped, a stream record with a null key is dropped by an
// inner join and emitted unmatched by a left join (Kafka Streams 3.7,
// KIP-962). Every drop is counted in [TableStats]. Values are not
// inspected: unlike Kafka Streams, which ignores null-value stream records,
// Eddy passes them to the join function, which decides.
//
// Results depend on the arrival order of table updates relative to stream
// records, as in Kafka Streams: a stream record that arrives before the
// table record it "should" see does not see it. They do not depend on batch
// boundaries.
//
// # Windowed joins
//
// A right record at t' matches a left record at t with the same key when
//
//	t - Before <= t' <= t + After
//
// Each side's records are buffered (encoded by [AppendRecord]) until no
// acceptable record can match them any more, that is until the watermark
// passes
//
//	left record at t:   t + After  + Grace
//	right record at t': t' + Before + Grace
//
// when they expire: left and outer joins then emit the left records that
// never matched (Pair.Right nil), outer joins also the right ones
// (Pair.Left nil), and the records are deleted from the buffer. This is the
// behaviour of Kafka Streams 3.1 and later, which emit unmatched records
// only when the window closes rather than eagerly (eager emission produced
// spurious unmatched results that a later match contradicted). Matched
// pairs are emitted at once, one per match, when the second record of the
// pair arrives; its Time is the later of the two times.
//
// Null keys never match: inner joins drop null-key records, left joins emit
// null-key left records unmatched at once (and drop right ones), outer
// joins emit either unmatched at once (KIP-962). As for stream-table joins,
// null values are joined like any other.
//
// # Watermarks and lateness
//
// An input's watermark is the largest event time seen on it minus
// [Config.Disorder]; the task watermark is the minimum over non-idle inputs
// and never decreases ([windowing.Watermarks]). A record is late when the
// watermark before it is past t + Grace. Late records are returned in
// [Output.Late] with their side and the watermark, and counted in
// [Stats.Late]; nothing is dropped silently. Event times must lie in
// [windowing.MinTime, windowing.MaxTime] (the years 0000 to 9999 UTC):
// Process refuses others with an error wrapping windowing.ErrTimeRange and
// windowing.ErrNoTimestamp, for the caller to dead-letter, so that a record
// at the end of int64 does not move the watermark to the end of time.
//
// # Why lateness is judged against t + Grace
//
// Kafka Streams judges a record late only once its own window has closed.
// A right record at t' can then still be joined after a left record it
// matches was emitted as unmatched (at t + After + Grace, before the right
// record's window closes at t' + Before + Grace): the left record yields an
// unmatched result and, later, a pair. Here a record is accepted only
// while the watermark is at most t + Grace, and a
// buffered record expires only once the watermark is past the largest
// t + Grace of any record that could match it. Hence every accepted record
// meets every accepted record of the other side that it matches, whatever
// the arrival order: the pairs are exactly the window join of the accepted
// records, and a record is emitted unmatched exactly when no accepted record
// matches it. The cost is a stricter notion of late: a record more than
// Grace behind the watermark is late even if its window is still open.
//
// # Determinism
//
// Records that respect the bounded disorder (on each input, no record is
// older than the input's largest time so far minus Disorder) are never
// late, whatever the interleaving of inputs. For them, the multiset of
// pairs and the set of unmatched results are those of the window join
// computed directly from the events, independent of batch boundaries and of
// the interleaving of the two sides. Unmatched results are emitted in the
// order (expiry time, side, key, time, arrival), which is the same in every
// run up to the order of records with equal side, key and time. Matched
// pairs are emitted when the second record arrives, so their order follows
// arrival. Three things break this, by nature: records beyond the disorder
// (whether they are late depends on the watermark at arrival, though the
// join of the accepted records stays exact), idle-input timeouts
// (processing time), and a processing-time extractor.
//
// # Expiry index
//
// To find what expires without scanning the buffer, a WindowJoin keeps in
// memory one index entry per buffered record, (expiry, side, key, time,
// sequence), in a min-heap ordered as emission is. Advancing the watermark
// pops the entries it passes: for each, left and outer joins read the one
// record back ([Buffer.Scan] over its time) to emit it if unmatched, and
// every join deletes it. [Stats.Buffered] is the heap's size. Memory is
// about 56 bytes plus the key per buffered record.
//
// # Restarts
//
// Everything needed after a restart is in the Buffer: every buffered record
// with its matched flag. The expiry index and the watermarks live in
// memory. After a restart the caller calls Assign with the task's inputs
// and [WindowJoin.Restore] with the task watermark it checkpointed (in the
// same transaction as the buffer and the output); Restore walks the buffer
// ([Buffer.Walk]) to rebuild the index. Input watermarks then start over
// from that watermark. Replaying the records after the checkpoint gives the
// same pairs and unmatched results as an uninterrupted run; emissions can
// come later, while the input watermarks catch up.
//
// A TableJoin holds no state besides its Table and needs no restore.
package join
