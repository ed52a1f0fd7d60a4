package host

import (
	"errors"
	"fmt"
)

// StateKeys returns how many keys the committed state of step holds on this
// node, over the partitions assigned to it: what their stores would restore
// from (the open transaction's changes are not counted). For an aggregate
// step that is one key per (key, window) accumulator plus the saved
// watermark of each partition. It is meant for tests and inspection and is
// safe to call while the node runs; it holds up dispatching while it scans.
func (n *Node) StateKeys(step string) (int, error) {
	found := false
	for _, s := range n.p.Steps {
		found = found || s.Name == step
	}
	if !found {
		return 0, fmt.Errorf("host: no step %q", step)
	}
	n.mu.Lock()
	defer n.mu.Unlock() // the node closes its database only after stopping every task
	parts := map[int32]bool{}
	for _, ps := range n.mu.tasks {
		for p := range ps {
			parts[p] = true
		}
	}
	if len(parts) == 0 {
		return 0, nil
	}
	// n.db is set before the client that assigns partitions is created.
	if n.db == nil {
		return 0, errors.New("host: the node keeps no state")
	}
	total := 0
	for p := range parts {
		k, err := n.db.Store(n.p.Name, step, p).Len()
		if err != nil {
			return 0, err
		}
		total += k
	}
	return total, nil
}
