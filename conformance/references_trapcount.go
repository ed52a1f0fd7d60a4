package conformance

import (
	"errors"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// trapcount (guests/go/trapcount) is a Go-only test fixture: the counter,
// trapping on the value "trap" after it has written that record's count.
// Its case pins what ABI.md section 3 promises the host does with the
// writes of a call that fails.
func init() {
	references["trapcount"] = []refCase{{"failed-calls-leave-no-state", expectTrapCount}}
}

func expectTrapCount(s *suite, inst *runtime.Instance) (string, error) {
	st := mapState{}
	inst.SetState(st)
	defer inst.SetState(nil)
	var recs []abi.Record
	for _, v := range []string{"a", "a", "trap", "a"} {
		recs = append(recs, abi.Record{Key: []byte("k"), Value: []byte(v)})
	}
	var out runtime.Output
	if err := inst.Process(s.ctx, recs, &out); err != nil {
		return "", err
	}
	var got []string
	for _, r := range out.Records {
		got = append(got, string(r.Value))
	}
	if len(got) != 3 || got[0] != "1" || got[1] != "2" || got[2] != "3" {
		return "", errorf("counts %q, want 1, 2, 3: a failed call's state writes were applied", got)
	}
	if len(out.Failed) != 1 || out.Failed[0].Index != 2 || !errors.Is(out.Failed[0], runtime.ErrTrap) {
		return "", errorf("failures %v, want record 2 trapped", out.Failed)
	}
	if string(st["k"]) != "3" {
		return "", errorf("stored count %q, want 3", st["k"])
	}
	return "the records around a trap count 1, 2, 3: the failed calls' state writes are dropped", nil
}
