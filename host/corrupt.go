package host

import "github.com/eddy-streams/eddy/abi"

// Corrupt entries. What a node reads back — its stores' entries, restored
// from a changelog topic that any Kafka client with write access can add
// to, or from the local store; progress markers on repartition topics — is
// decoded defensively: an entry that does not decode, or names
// something that cannot exist (a window this step's windows cannot have, an
// input the task does not have), is skipped, counted in
// eddy_corrupt_entries_total and logged, and the node goes on. Stopping
// instead would stop it again after every restart, since the entry stays in
// the changelog and in the local store. A skipped entry is not deleted:
// it stays where it is for an operator to look at (eddy reset rebuilds the
// state).

// corruptKind says what kind of entry was skipped: the kind label of
// eddy_corrupt_entries_total.
type corruptKind int

const (
	corruptStore    corruptKind = iota // an entry of a step's store
	corruptProgress                    // a progress marker on a repartition topic
	nCorruptKinds
)

func (k corruptKind) String() string {
	switch k {
	case corruptStore:
		return "store"
	case corruptProgress:
		return "progress"
	}
	return "unknown"
}

// maxCorruptLogs is how many corrupt entries of one store restore (or one
// batch of markers) are logged one by one; the rest are counted, and one
// line says how many there were. A changelog full of garbage must not turn
// into as many log lines.
const maxCorruptLogs = 5

// maxLoggedBytes bounds the error text a log line about a corrupt entry
// shows (four times it); keys are shown by brief.
const maxLoggedBytes = 64

// skipper reports the corrupt entries met while reading back one store (or
// one batch of a repartition topic). Its zero value is not usable: see
// Node.skipper.
type skipper struct {
	n     *Node
	step  int
	where string // the store's changelog or the topic, for the log
	part  int32
	count int
}

func (n *Node) skipper(step int, where string, part int32) *skipper {
	return &skipper{n: n, step: step, where: where, part: part}
}

// skip counts and logs one corrupt entry whose key is key.
func (s *skipper) skip(kind corruptKind, key []byte, err error) {
	s.count++
	s.n.metrics.steps[s.step].corrupt[kind].Add(1)
	if s.count > maxCorruptLogs {
		return
	}
	s.n.log.Warn("corrupt entry skipped", "step", s.n.p.Steps[s.step].Name, "kind", kind.String(), "from", s.where,
		"partition", s.part, "key", brief(key), "key_bytes", len(key), "error", abi.TruncateReason(err.Error(), 4*maxLoggedBytes))
}

// bad skips a corrupt store entry (restoreInputTimes's bad).
func (s *skipper) bad(k []byte, err error) error {
	s.skip(corruptStore, k, err)
	return nil
}

// done logs how many entries were skipped past those logged one by one.
func (s *skipper) done() {
	if s.count > maxCorruptLogs {
		s.n.log.Warn("corrupt entries skipped", "step", s.n.p.Steps[s.step].Name, "from", s.where, "partition", s.part,
			"entries", s.count, "logged", maxCorruptLogs)
	}
}
