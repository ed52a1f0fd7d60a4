package conformance

import (
	"context"
	"fmt"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// expectPrefix checks the reference function prefix: the step's config
// entry "prefix" before each value (ABI.md "Configuration"); without it,
// records unchanged.
func expectPrefix(s *suite, inst *runtime.Instance) (string, error) {
	in := []abi.Record{{Key: []byte("k"), Value: []byte("v"), Timestamp: 3}, {Value: nil, Timestamp: 4}, {Value: []byte("ünï"), Timestamp: 5}}
	got, err := processOutcome(s, inst, in, len(in))
	if err != nil {
		return "", err
	}
	if err := sameOutcome("without config", "got", got, "want", outcome{`k="k" v="v" t=3;`, `k=nil v=nil t=4;`, `k=nil v="ünï" t=5;`}); err != nil {
		return "", err
	}
	fn, err := s.eng.Load(s.ctx, s.name+"-configured", s.wasm, runtime.WithConfig(map[string][]byte{"prefix": []byte("p-"), "other": []byte("x")}))
	if err != nil {
		return "", err
	}
	defer fn.Close(context.WithoutCancel(s.ctx))
	ci, err := fn.NewInstance(s.ctx)
	if err != nil {
		return "", err
	}
	defer ci.Close(context.WithoutCancel(s.ctx))
	for _, size := range []int{len(in), 1} {
		got, err := processOutcome(s, ci, in, size)
		if err != nil {
			return "", err
		}
		if err := sameOutcome(fmt.Sprintf("with prefix p- in batches of %d", size), "got", got, "want",
			outcome{`k="k" v="p-v" t=3;`, `k=nil v="p-" t=4;`, `k=nil v="p-ünï" t=5;`}); err != nil {
			return "", err
		}
	}
	return "values unchanged without config, behind the prefix with it", nil
}
