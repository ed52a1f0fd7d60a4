// Package windowing provides Eddy's event-time logic: timestamp extraction,
// watermarks, window assignment, lateness, session merging, emission and
// state expiry. It is pure Go with no Kafka, storage or Wasm dependency; the
// node wires it to those.
//
// # Usage
//
// A task owns one [Windower]. The caller implements [Store], which holds
// one accumulator per key and state unit (a window, or a pane of windows,
// see Panes) — in Eddy, state-store entries updated by the guest's
// eddy_agg_* functions — and feeds records in arrival order:
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
// Event times are valid from [MinTime] to [MaxTime], the years 0000 to 9999
// UTC. [Windower.Process] refuses a record outside with an error wrapping
// [ErrTimeRange] and [ErrNoTimestamp] (the caller dead-letters it), and
// Progress refuses such a time. Durations are at most about 292 years, so
// within the range no window bound, close or expiry time can overflow.
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
// # Panes
//
// Hopping windows overlap: a record belongs to size/advance of them (2 or 3
// for 10 s every 4 s). Their state is therefore kept in panes, the
// intervals of gcd(size, advance) aligned like the windows (2 s in that
// example; whole days in a zone), and every window is a whole number of
// panes. A record is folded once, into its pane ([Store.Add] with the
// pane), and a window's result is the merge of the key's panes inside it,
// oldest first ([Store.Result] lists them; in Eddy eddy_agg_merge does the
// merging). Sliding windows are kept the same way, with a pane per
// timestamp. A record late for some of its windows and accepted by others
// goes into the pane all the same; the closed windows have fired already
// and never read it. Tumbling windows, and hopping windows whose advance is
// their size, are their own pane.
//
// The result of a window is thus the merge of per-pane accumulators rather
// than one accumulator folded in arrival order: the same for aggregates
// whose merge is exact (counts, integer sums, min, max), but an aggregate
// that depends on arrival order across panes (the last record to arrive,
// say) sees the panes in time order, and a floating-point sum may round
// differently.
//
// The store layout follows: before panes, hopping state was one
// accumulator per (key, window). Such state is not readable as panes;
// [Windower.Restore] rejects an entry that is not a pane of the configured
// windows, so a store written by the older layout must be reset (rebuilt
// from the input) rather than restored.
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
// count returns to zero once the watermark passes. A pane is deleted when
// the last window that contains it expires: no open window, nor one kept
// for retention, needs it any more. [Stats.Open] counts the (key, window)
// states the Windower believes exist.
//
// # Restarts
//
// The window index (which keys have state in which windows and panes) and
// the watermarks live in memory. After a restart the caller calls
// [Windower.Restore] with the checkpointed task watermark and each (key,
// window) found in its store — (key, pane) for hopping and sliding windows,
// from which the Windower derives the windows; partition watermarks then
// start over from that watermark. A global count window's key also needs
// its count (records since its last firing): the caller saves what
// [Windower.TakeCounts] reports with its state and gives it back with
// [Windower.RestoreCount].
package windowing
