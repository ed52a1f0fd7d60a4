package eddy

import (
	"errors"
	"fmt"
)

// Error codes of ABI.md section 7 that the SDK writes into result envelopes.
const (
	codeOK          int32 = 0
	codeRejected    int32 = 1
	codeBadInput    int32 = 2
	codePanic       int32 = 3
	codeUnsupported int32 = 4
	codeBadEnvelope int32 = 5
	codeState       int32 = 6
)

// ErrNoState is returned by StateGet, StatePut and StateDelete when the
// function has no state store: it runs in a step that is not stateful, or
// under `eddy test` without --state. The handler decides what to do; returned
// as is, it rejects the record (code REJECTED).
var ErrNoState = errors.New("eddy: no keyed state store (the step is not stateful)")

// ErrStateFailed is returned by StateGet, StatePut and StateDelete when the
// host's state storage failed. A handler that returns it (or an error wrapping
// it) fails the record with code STATE (6).
var ErrStateFailed error = &codeError{code: codeState, err: errors.New("eddy: keyed state storage failed")}

// codeError is an error that carries an ABI error code.
type codeError struct {
	code int32
	err  error
}

// Error implements error.
func (e *codeError) Error() string { return e.err.Error() }

// Unwrap returns the wrapped error.
func (e *codeError) Unwrap() error { return e.err }

// BadInput marks err as "the record's payload could not be decoded" (code
// BAD_INPUT, 2), as opposed to a record the function decoded and refused. The
// reason is err.Error(); a nil err gets the reason "bad input".
//
//	v, err := strconv.ParseFloat(string(r.Value), 64)
//	if err != nil {
//		return eddy.Record{}, eddy.BadInput(err)
//	}
func BadInput(err error) error {
	if err == nil {
		err = errors.New("bad input")
	}
	return &codeError{code: codeBadInput, err: err}
}

// ErrorCode fails a record with a function-defined code, which the host
// carries to the dead-letter record. code must be in 64–255 (the user range of
// ABI.md section 7); any other code is reported as REJECTED (1). The reason is
// err.Error(); a nil err gets the reason "error CODE".
//
//	return eddy.Record{}, eddy.ErrorCode(77, errors.New("unknown currency"))
func ErrorCode(code int, err error) error {
	if err == nil {
		err = fmt.Errorf("error %d", code)
	}
	c := codeRejected
	if code >= 64 && code <= 255 {
		c = int32(code)
	}
	return &codeError{code: c, err: err}
}

// failure returns the code and reason for a handler's error: the code of the
// first coded error in its chain, else REJECTED.
func failure(err error) (int32, string) {
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code, err.Error()
	}
	return codeRejected, err.Error()
}

// panicError turns a recovered panic value into an error with code PANIC.
func panicError(v any) error {
	err, ok := v.(error)
	if !ok {
		err = errors.New(fmt.Sprint(v))
	}
	return &codeError{code: codePanic, err: err}
}
