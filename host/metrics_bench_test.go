package host

import (
	"testing"

	"github.com/eddy-streams/eddy/graph"
)

// BenchmarkStepMeter measures what metrics add to a task's batch: a stage
// of a map and a filter over a batch of 500 records (the default
// batch_size) metered as process meters it (stepMeter, countDropped).
func BenchmarkStepMeter(b *testing.B) {
	const batch = 500
	p := &Pipeline{Name: "bench", Steps: []Step{{Name: "m", Kind: StepMap}, {Name: "f", Kind: StepFilter}}}
	n := &Node{p: p, stages: []Stage{{From: 0, To: 2, Last: true}}}
	n.metrics = newMetrics(n)
	t := &task{n: n, exec: graph.New(p, n.stages[0], graph.Deps{})}
	b.ReportAllocs()
	for b.Loop() {
		var sm stepMeter
		sm.enter(t, 0, batch, 0)
		sm.enter(t, 1, batch, batch)
		n.metrics.countDropped(1, batch/2)
		sm.leave(t, batch/2)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/record")
}
