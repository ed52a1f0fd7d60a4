package admin

import (
	"context"

	"github.com/eddy-streams/eddy/registry"
)

// Backend is what the admin API serves: the node implements it. The server
// calls it from many goroutines at once, one per request, each with the
// request's context (cancelled when the client goes away or the server
// shuts down hard).
//
// Errors choose the response: an *Error (see [Errorf]) is sent with its
// status and code; any other error is a 500 with [CodeInternal] and the
// error's message, except from Health, where it is a 503 with
// [CodeUnavailable]. The conventions the CLI relies on:
//
//   - an unknown pipeline or step: 404 [CodeNotFound];
//   - an action that cannot follow the step's history (no earlier version,
//     no shadow, a lost race for the version number): 409 [CodeConflict];
//   - a module the node cannot run (not Wasm, another ABI, a missing
//     export): 422 [CodeInvalidModule];
//   - a module the node can run, but not in the step (another kind, state
//     or timer calls the step does not serve): 422
//     [CodeIncompatibleModule];
//   - a smoke test whose output is not the expected records: 422
//     [CodeSmokeTestFailed].
//
// The server has already checked the token, the body size and the request's
// shape (a non-empty module, a sample if there is an expect) before it calls
// a method that changes anything.
type Backend interface {
	// Health reports whether the node is serving: nil if so.
	Health(ctx context.Context) error
	// Status returns the node's status, in a shape of the node's choosing;
	// it must encode with encoding/json.
	Status(ctx context.Context) (any, error)
	// Cluster returns the status of every node of the pipeline's group
	// that serves an admin API, gathered by this node (GET /v1/cluster).
	Cluster(ctx context.Context) (any, error)
	// Functions returns the registry state of the pipeline's steps, or of
	// every pipeline's if pipeline is "".
	Functions(ctx context.Context, pipeline string) ([]registry.StepState, error)
	// History returns one step's registry state with its full history.
	History(ctx context.Context, pipeline, step string) (registry.StepState, error)
	// Deploy checks a module (and runs the smoke test, if any) and makes it
	// the step's live module, or its shadow if req.Shadow. It returns the
	// event once it has taken effect.
	Deploy(ctx context.Context, req DeployRequest) (registry.Event, error)
	// Rollback makes the module of an earlier version live again: version
	// target, or if target is 0 the version live before the current one.
	Rollback(ctx context.Context, pipeline, step string, target int, note string) (registry.Event, error)
	// Promote makes the step's shadow module live.
	Promote(ctx context.Context, pipeline, step, note string) (registry.Event, error)
	// Discard drops the step's shadow.
	Discard(ctx context.Context, pipeline, step, note string) (registry.Event, error)
	// State reads a store of the node's pipeline (see StateQuery): from
	// the node's own partitions, or through the node that owns a key, or
	// from every node of the group for a scan, unless q.Local.
	State(ctx context.Context, q StateQuery) (StateResult, error)
}

// DeployRequest is a deploy of a module to one step.
type DeployRequest struct {
	Pipeline, Step string
	// Module is the WebAssembly module, never empty.
	Module []byte
	// Note is free text recorded in the event ("" if none).
	Note string
	// Shadow deploys the module as the step's shadow instead of making it
	// live.
	Shadow bool
	// Sample and Expect are an optional smoke test, both JSON lines: the
	// module is run over the Sample records and must produce exactly the
	// Expect records. Expect is only set with Sample; a Sample alone only
	// has to run without error.
	Sample, Expect []byte
	// Config, if not nil, is the config the new version runs with
	// (registry.Event.Config): values, and where nodes read secrets from.
	// Nil carries on the live version's.
	Config map[string]registry.ConfigEntry
}
