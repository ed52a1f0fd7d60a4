package host

import (
	"context"
	"fmt"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
	"github.com/eddy-streams/eddy/state"
)

// Limits of what a record may bring into a store. An aggregate or join step
// keys its store by the record key with a prefix and a suffix of its own (at
// most 20 bytes: state.MaxKey leaves 64), and a join buffers the whole
// record: a record over these is dead-lettered before it reaches the store
// (cause state_limit), which would refuse it and fail the batch. (The
// function of a `state: true` step chooses its own keys: the state_put host
// call enforces abi.MaxStateKey and abi.MaxStateValue.)
const (
	maxRecordKey = abi.MaxStateKey // 16 KiB
	// joinEntryOverhead bounds what a join's buffer entry adds to the
	// record's key, value and headers (join.AppendRecord's version,
	// timestamp and lengths, and the matched flag: 27 bytes), and
	// joinHeaderOverhead what it adds per header (two lengths).
	joinEntryOverhead  = 64
	joinHeaderOverhead = 10
)

// stateLimit returns why record r cannot enter step s's store, or "".
func (t *task) stateLimit(s int, r *abi.Record) string {
	windowed := t.n.p.Steps[s].Kind != StepJoin || t.joins[s] != nil && t.joins[s].win != nil
	if !windowed {
		return "" // a stream record only looks its table up
	}
	if len(r.Key) > maxRecordKey {
		return fmt.Sprintf("record key of %d bytes is over the limit of %d bytes for a stateful step", len(r.Key), maxRecordKey)
	}
	if t.n.p.Steps[s].Kind != StepJoin {
		return ""
	}
	size := len(r.Key) + len(r.Value) + joinEntryOverhead
	for _, h := range r.Headers {
		size += len(h.Key) + len(h.Value) + joinHeaderOverhead
	}
	if size > state.MaxValue {
		return fmt.Sprintf("record of about %d bytes is over the limit of %d bytes a join buffers", size, state.MaxValue)
	}
	return ""
}

// refuseOversized dead-letters the records of cur that step s could not
// store (see stateLimit) and returns the others with their sources. It
// copies nothing when every record fits.
func (t *task) refuseOversized(ctx context.Context, b *batch, s int, kind abi.Kind, cur []abi.Record, src []int32) ([]abi.Record, []int32) {
	first := -1
	for j := range cur {
		if t.stateLimit(s, &cur[j]) != "" {
			first = j
			break
		}
	}
	if first < 0 {
		return cur, src
	}
	name := t.n.p.Steps[s].Name
	if lf := t.fns[s]; lf != nil {
		name = lf.fn.Name()
	}
	keep := append([]abi.Record(nil), cur[:first]...)
	ksrc := append([]int32(nil), src[:first]...)
	for j := first; j < len(cur); j++ {
		reason := t.stateLimit(s, &cur[j])
		if reason == "" {
			keep = append(keep, cur[j])
			ksrc = append(ksrc, src[j])
			continue
		}
		t.deadLetter(ctx, b, b.records[src[j]], s, &runtime.Error{Function: name, Kind: kind,
			Cause: runtime.CauseStateLimit, Index: j, Group: -1, Reason: reason})
	}
	return keep, ksrc
}

// brief shows key in an error or a log line: quoted, and cut to its first
// 32 bytes with its length when longer. Keys reach 16 KiB (and more in a
// forged changelog entry); a message must not carry them whole.
func brief(key []byte) string {
	const show = 32
	if len(key) <= show {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q... (%d bytes)", key[:show], len(key))
}
