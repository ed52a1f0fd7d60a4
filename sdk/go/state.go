package eddy

// Keyed state (ABI.md section 3). The host scopes the store to the pipeline
// step and the partition; records with the same Kafka key always reach the
// same partition, so state keyed by the record key (optionally with a suffix)
// is consistent. Writes are visible to later reads at once, and are committed
// atomically with the output of the call.

// stateBuf receives state_get values; it grows to the largest value read.
var stateBuf []byte

// maxStateTries bounds the grow-and-retry loop of StateGet.
const maxStateTries = 4

// StateGet reads the value stored under key. ok is false if there is none.
// The error is ErrNoState if the step has no state store, or ErrStateFailed
// if the host's storage failed.
//
// The returned value is a view into a buffer the SDK reuses: it is valid only
// until the next StateGet, and must be copied to be kept. StateGet does not
// allocate once its buffer has grown to the size of the values read.
func StateGet(key []byte) (value []byte, ok bool, err error) {
	if stateBuf == nil {
		stateBuf = make([]byte, 256)
	}
	for range maxStateTries {
		n := hostStateGet(key, stateBuf[:cap(stateBuf)])
		switch {
		case n == -1:
			return nil, false, nil
		case n == -2:
			return nil, false, ErrNoState
		case n < 0:
			return nil, false, ErrStateFailed
		case int(n) <= cap(stateBuf):
			return stateBuf[:n:n], true, nil
		}
		// The value is larger than the buffer: nothing was copied.
		// Grow and ask again.
		stateBuf = make([]byte, int(n)+int(n)/4)
	}
	return nil, false, ErrStateFailed
}

// StatePut stores value under key, replacing any previous value. The host
// copies both during the call. The error is ErrNoState or ErrStateFailed.
func StatePut(key, value []byte) error {
	return stateErr(hostStatePut(key, value))
}

// StateDelete removes key; deleting an absent key is not an error. The error
// is ErrNoState or ErrStateFailed.
func StateDelete(key []byte) error {
	return stateErr(hostStateDelete(key))
}

func stateErr(rc int32) error {
	switch rc {
	case 0:
		return nil
	case -2:
		return ErrNoState
	}
	return ErrStateFailed
}
