package host

import (
	"context"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/graph"
	"github.com/eddy-streams/eddy/join"
	"github.com/eddy-streams/eddy/runtime"
)

// taskPorts connect a task's graph.Executor to the task and its node for
// the batch in progress (b; nil when InProcess.Flush runs window results):
// failed records go to the dead-letter topic with the batch's offsets, a
// step's output to its to: topic in the batch's transaction, key_by,
// aggregate and join steps to the task's stores, and the counts to the
// node's metrics.
type taskPorts struct {
	t     *task
	b     *batch
	meter stepMeter // metrics.go; reset for each batch
}

var (
	_ graph.Collector = (*taskPorts)(nil)
	_ graph.Operators = (*taskPorts)(nil)
	_ graph.Meter     = (*taskPorts)(nil)
)

func (p *taskPorts) Fail(ctx context.Context, s int, cur []abi.Record, src []int32, j int, e *runtime.Error) {
	p.t.failRecord(ctx, p.b, s, cur, src, j, e)
}

func (p *taskPorts) Tap(ctx context.Context, s int, cur []abi.Record, src []int32) {
	p.t.tap(ctx, p.b, s, cur, src)
}

func (p *taskPorts) KeyBy(ctx context.Context, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	return p.t.keyBy(ctx, p.b, s, cur, src)
}

// Aggregate gives the records their event time when this task is where
// they get it (task.timed), folds them into step s's windows and returns
// the results, which descend from no one input record (src -1).
func (p *taskPorts) Aggregate(ctx context.Context, s int, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	t := p.t
	var err error
	if t.timed[s] {
		if cur, src, err = t.eventTimes(ctx, p.b, s, cur, src); err != nil {
			return nil, nil, err
		}
	}
	if cur, err = t.aggregate(ctx, p.b, s, cur, src); err != nil {
		return nil, nil, err
	}
	return cur, t.resultSrc(len(cur)), nil
}

func (p *taskPorts) Join(ctx context.Context, s int, side join.Side, cur []abi.Record, src []int32) ([]abi.Record, []int32, error) {
	return p.t.joinStep(ctx, p.b, s, side, cur, src)
}

func (p *taskPorts) Enter(s, in, prevOut int) { p.meter.enter(p.t, s, in, prevOut) }
func (p *taskPorts) Leave(out int)            { p.meter.leave(p.t, out) }
func (p *taskPorts) Dropped(s, n int)         { p.t.n.metrics.countDropped(s, n) }

// setFunction makes step s run inst, an instance of version lf (nil, nil:
// no function): the executor holds the instance, the task the version.
func (t *task) setFunction(s int, inst *runtime.Instance, lf *liveFn) {
	t.fns[s] = lf
	f := graph.Func{Instance: inst}
	if lf != nil {
		f.Name = lf.fn.Name()
	}
	t.exec.Steps[s] = f
}

// inst is step s's instance (nil: the step runs no function).
func (t *task) inst(s int) *runtime.Instance { return t.exec.Steps[s].Instance }
