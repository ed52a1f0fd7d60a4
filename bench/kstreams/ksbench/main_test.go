package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/nexmark/nxbench"
)

// ksbench waits for as many Kafka Streams outputs as the expectation says:
// it must be what Eddy's pipeline writes for the same events, or a run
// would end early (and fail its check) or never.
func TestExpectedOutputsAreEddys(t *testing.T) {
	const events = 20_000
	evs, err := nxbench.Events(events)
	if err != nil {
		t.Fatal(err)
	}
	for q, exp := range expectations {
		rep, err := nxbench.RunInProcess(context.Background(), nxbench.Options{Query: q, Events: events, Native: true, Keep: true})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := exp.outputs(evs); got != int(rep.Outputs) {
			t.Errorf("%s: expected %d outputs, Eddy's pipeline writes %d", q, got, rep.Outputs)
		}
		if err := nxbench.Queries[q].Check(evs, rep.Out); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestProcCPU(t *testing.T) {
	n := 0
	for i := range 200_000_000 {
		n += i & 3
	}
	if got := procCPU(os.Getpid()); got <= 0 {
		t.Fatalf("procCPU of this process after a busy loop (%d) = %s, want > 0", n, got)
	}
	if got := procCPU(-1); got != 0 {
		t.Fatalf("procCPU of no process = %s, want 0", got)
	}
}

// run.sh fails with one line and status 1 when no broker answers (or,
// on a machine without them, when java, mvn or go are missing).
func TestRunShFailsClearly(t *testing.T) {
	cmd := exec.Command("bash", "../run.sh", "127.0.0.1:1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("run.sh with no broker: %v, want exit status 1; stderr: %s", err, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "run.sh: ") {
		t.Fatalf("run.sh with no broker: stderr %q, want one line starting run.sh: ", msg)
	}
	if _, err := exec.LookPath("java"); err == nil && !strings.Contains(msg, "no broker answers at 127.0.0.1:1") {
		t.Fatalf("run.sh with no broker: %q, want it to say no broker answers", msg)
	}
}
