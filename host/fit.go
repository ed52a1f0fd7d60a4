package host

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// stateCalls and timerCalls are the host calls that answer -2 (no store)
// in a step without keyed state, or without timers: a module that imports
// them would fail, or mishandle, every record such a step gives it.
var (
	stateCalls = []string{abi.HostStateGet, abi.HostStatePut, abi.HostStateDelete}
	timerCalls = []string{abi.HostTimerSet, abi.HostTimerDelete}
)

// checkFit says why fn, a module that loads, cannot be step's function:
// its manifest lacks the kind the step calls; or the step is a map, filter
// or flat_map step (it calls the process kind) and the module imports the
// keyed-state calls while the step has no state: true, or imports the
// timer calls or answers timers (the timer kind) while the step has no
// timers (Step.Timed). Such a module would dead-letter every record, so a
// deploy refuses it, and so does a node starting with it. The error gives
// every reason; nil when the module fits.
//
// Imports are the module's, not a kind's: in a key_by, join or aggregate
// step, which call other kinds (and have no timers), a module's state
// calls may serve its process kind in another step of the pipeline (one
// module can be a pipeline's stateful map and its aggregate), so they are
// not asked there. Whether the module exports eddy_timer is not asked
// either: SDKs export every kind's functions from every module (the Go SDK
// does), and the manifest says which it implements.
func checkFit(step Step, fn *runtime.Function) error {
	need := kindFor(step.Kind)
	process := need == abi.KindProcess
	return fit(fn, need, string(step.Kind)+" step", step.State || !process, step.Timed() || !process)
}

// checkTimeFit is checkFit for a step's time_function: its manifest must
// have the timestamp kind. Its imports are not asked: it may be the step's
// own module, which imports what its other kinds call.
func checkTimeFit(fn *runtime.Function) error {
	return fit(fn, abi.KindTimestamp, "time_function", true, true)
}

// fit says why fn cannot be called for kind need by what (a step of some
// kind, a time_function); state and timers say whether its keyed-state
// calls, and its timer calls and timer kind, are fine there.
func fit(fn *runtime.Function, need abi.Kind, what string, state, timers bool) error {
	info := fn.Info()
	var why []string
	if !info.Manifest.Has(need) {
		why = append(why, fmt.Sprintf("a %s calls the %s kind, and the module's manifest has %s", what, need, kindList(info.Manifest.Kinds)))
	}
	if !state {
		if calls := imported(info.Imports, stateCalls); len(calls) > 0 {
			why = append(why, fmt.Sprintf("it imports %s, but the step has no keyed state (state: true in the pipeline file gives it a store)",
				strings.Join(calls, ", ")))
		}
	}
	if !timers {
		calls := imported(info.Imports, timerCalls)
		answers := info.Manifest.Has(abi.KindTimer)
		var does string
		switch {
		case len(calls) > 0 && answers:
			does = "it imports " + strings.Join(calls, ", ") + " and answers timers (the timer kind)"
		case len(calls) > 0:
			does = "it imports " + strings.Join(calls, ", ")
		case answers:
			does = "it answers timers (its manifest has the timer kind)"
		}
		if does != "" {
			why = append(why, does+", but the step has no timers (a map, filter or flat_map step with state: true has them)")
		}
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(why, "; "))
}

// imported returns the calls of the eddy host module among imports
// ("module.name"), as imports writes them.
func imported(imports, calls []string) []string {
	var out []string
	for _, c := range calls {
		if name := abi.HostModule + "." + c; slices.Contains(imports, name) {
			out = append(out, name)
		}
	}
	return out
}

// kindList writes a manifest's kinds for an error: "process, timer", or
// "no kind".
func kindList(kinds []abi.Kind) string {
	if len(kinds) == 0 {
		return "no kind"
	}
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return "only " + strings.Join(s, ", ")
}

// loadStepFunction is loadFunction for the function of step i, refusing
// (and closing) a module that does not fit the step (checkFit).
func (n *Node) loadStepFunction(ctx context.Context, i int, wasm []byte, cfg versionConfig) (*runtime.Function, error) {
	fn, err := n.loadFunction(ctx, i, wasm, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkFit(n.p.Steps[i], fn); err != nil {
		fn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("the module does not fit step %s: %w", n.p.Steps[i].Name, err)
	}
	return fn, nil
}
