package admin

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes, the "code" of an error response. A backend may use others;
// these are the ones the server and the node produce.
const (
	// CodeBadRequest: the request is malformed (a missing module part, a
	// bad JSON body, an unknown form field).
	CodeBadRequest = "bad_request"
	// CodeUnauthorized: a missing or wrong token, or none configured.
	CodeUnauthorized = "unauthorized"
	// CodeNotFound: an unknown route, pipeline or step.
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed: a known route with another method.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeConflict: the action cannot follow the step's history (nothing to
	// roll back to, no shadow to promote, a lost race for a version).
	CodeConflict = "conflict"
	// CodeTooLarge: a request body over Config.MaxUpload.
	CodeTooLarge = "too_large"
	// CodeUnsupportedMediaType: a deploy body that is neither multipart nor
	// application/wasm.
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeInvalidModule: the module is not one the node can run (not Wasm,
	// another ABI, a missing export).
	CodeInvalidModule = "invalid_module"
	// CodeIncompatibleModule: the node can run the module, but not in the
	// step it is deployed to (its manifest lacks the kind the step calls,
	// or it imports keyed-state or timer calls the step does not serve):
	// every record would fail.
	CodeIncompatibleModule = "incompatible_module"
	// CodeSmokeTestFailed: the module's output for the sample records is
	// not the expected records.
	CodeSmokeTestFailed = "smoke_test_failed"
	// CodeUnavailable: the node is not healthy (GET /v1/health).
	CodeUnavailable = "unavailable"
	// CodeInternal: any error that is not an *Error.
	CodeInternal = "internal"
)

// Error is an error with an HTTP status and a code: what a [Backend]
// returns to choose the response, and what a [Client] returns for an error
// response. Any other error from a backend is answered with 500 and
// [CodeInternal].
type Error struct {
	// Status is the HTTP status, 4xx or 5xx.
	Status int `json:"-"`
	// Code is machine-readable: one of the Code* constants or the
	// backend's own.
	Code string `json:"code"`
	// Message is for people.
	Message string `json:"message"`

	err error // what Errorf wrapped, if anything
}

// Errorf returns an *Error whose message is formatted as by fmt.Errorf; an
// error wrapped with %w is kept for errors.Is and errors.As (but is not
// sent over the wire).
func Errorf(status int, code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Status: status, Code: code, Message: err.Error(), err: err}
}

func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the error Errorf formatted (through which the errors it
// wrapped with %w are found) or the one AsError was given, or nil.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether target is an *Error with the same code (and the same
// status, if target's is not 0), so errors.Is(err, &admin.Error{Code:
// admin.CodeNotFound}) works on any error chain.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Code != e.Code {
		return false
	}
	return t.Status == 0 || t.Status == e.Status
}

// HasCode reports whether err is, or wraps, an *Error with the code.
func HasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// AsError returns err as an *Error: itself if it is or wraps one, else a
// 500 [CodeInternal] with err's message.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Status < 400 || e.Status > 599 {
			c := *e
			c.Status = http.StatusInternalServerError
			return &c
		}
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error(), err: err}
}
