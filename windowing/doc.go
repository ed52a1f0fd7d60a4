// Package windowing provides Eddy's event-time logic: timestamp extraction,
// watermarks, window assignment, lateness, session merging, emission and
// state expiry. It is pure Go with no Kafka, storage or Wasm dependency; the
// node wires it to those.
//
// # Usage
//
// A task owns one [Windower]. The caller implements [Store], which holds
// one accumulator per (key, window) — in Eddy, state-store entries updated by
// the guest's eddy_agg_* functions — and feeds records in arrival order:
//
//	w, err := windowing.New(windowing.Config{
//		Window:      windowing.Tumbling(time.Minute),
//		Disorder:    5 * time.Second,  // bounded out-of-orderness
//		Grace:       30 * time.Second, // allowed lateness
//		IdleTimeout: time.Minute,
//	}, store)
//	w.Assign(0, 1, 2)
//	var out windowing.Output
//	for each record r of partition p {
//		if err := w.Process(p, r, &out); err != nil { ... }
//	}
//	err = w.Advance(&out) // after each batch, and on a timer
//	// out.Emits: window results to produce; out.Late: records for the
//	// late-data side output. Then out.Reset().
//
// # Time
//
// Event time comes from the record timestamp ([RecordTime], the default), a
// JSON field ([JSONField]), or any [Extractor] (the host plugs a Wasm
// timestamp extractor in). [LogAppendTime] is the record timestamp of a topic
// with message.timestamp.type=LogAppendTime. [ProcessingTime] is available
// but not deterministic. All times are UTC milliseconds since the epoch;
// tumbling and hopping windows of whole days can be aligned to local
// midnight of an IANA zone ([Spec.In]), so they follow DST.
//
// # Watermarks and lateness
//
// A partition's watermark is the largest event time seen on it minus
// [Config.Disorder]; the task watermark is the minimum over non-idle
// partitions and never decreases ([Watermarks]). A window closes when the
// watermark reaches its close time:
//
//	tumbling, hopping:  end + grace
//	sliding [t-size, t+1): t + 1 + grace
//	session [first, last+1): last + 1 + gap + grace
//	global: never (it fires every Count records of a key)
//
// A record is late for a window that is closed when it arrives (judged
// against the watermark before the record). Late records are returned in
// [Output.Late] with the window and the watermark, and counted in
// [Stats.Late]; nothing is dropped silently. A session record is late when
// it is more than grace behind the watermark, and a sliding record when its
// own window has closed; these rules ensure an accepted record never
// reaches a closed window.
//
// # Determinism
//
// Records that respect the bounded disorder (on each partition, no record
// is older than the partition's largest time so far minus Disorder) are
// never late, whatever the interleaving of partitions, and a window fires
// only once no such record can reach it. Final results, and their order
// (close time, window, key), are therefore independent of batch boundaries
// and partition interleaving; in EmitUpdate mode the last update of each
// window is. Three things break this, by nature: records beyond the
// disorder (whether they are late depends on the watermark at arrival),
// idle-partition timeouts (processing time), and [ProcessingTime].
// Global count windows depend on each key's arrival order, which is
// deterministic when a key lives in one partition.
//
// # State expiry
//
// After a window fires and [Config.Retention] more event time has passed,
// the Windower calls [Store.Delete] for each of its keys, so a store's key
// count returns to zero once the watermark passes. [Stats.Open] counts the
// accumulators the Windower believes exist.
//
// # Restarts
//
// The window index (which keys have state in which windows) and the
// watermarks live in memory. After a restart the caller calls
// [Windower.Restore] with the checkpointed task watermark and each (key,
// window) found in its store; partition watermarks then start over from that
// watermark. Global count windows are not restorable yet.
package windowing
