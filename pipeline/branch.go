package pipeline

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Branch is one branch of a branch step: the records its predicate (a
// filter function) keeps and no earlier branch took. The last branch may
// have no function: it takes every record the others did not.
type Branch struct {
	Name     string `yaml:"name"`
	Function string `yaml:"function"`
	// To writes the branch's records to this topic.
	To string `yaml:"to"`
}

// Output is a named output of a map, filter or flat_map step: the records
// its function routes there (abi.HeaderOutput). A bare name is accepted
// for an output without a topic.
type Output struct {
	Name string `yaml:"name"`
	// To writes the output's records to this topic.
	To string `yaml:"to"`
}

// UnmarshalYAML accepts an output as a mapping or as its bare name.
func (o *Output) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&o.Name)
	}
	type plain Output
	return n.Decode((*plain)(o))
}

// MaxOutputs bounds the branches of a branch step and the outputs of a
// step: each becomes a step of the running pipeline.
const MaxOutputs = 32

// StepOutput is the kind of the step a branch without a function or a
// named output becomes (expandOutputs): its records are put in place by
// the step it belongs to, and go on as they are. Pipeline files cannot
// name it.
const StepOutput StepKind = "output"

// GraphPart says, for a step that expandOutputs made, what it is part of.
type GraphPart struct {
	// Of is the name of the pipeline file's step it was made from ("" for
	// a step of the file).
	Of string
	// Branch is set for the steps of a branch step's branches.
	Branch bool
	// Fed is set when the step's input is put in place by an earlier step
	// (Feeds) rather than read from the steps its from: names.
	Fed bool
	// Feeds are the steps whose input this step puts in place: a routing
	// step's named outputs, in the order of Step.Outputs; a branch's
	// predicate step feeds the next branch with the records it drops.
	Feeds []int
}

// validateBranches checks a branch step and a step's named outputs: the
// names, the topics, and that each branch and output goes somewhere.
func (p *Pipeline) validateBranches(bad func(field, format string, args ...any)) {
	for i, s := range p.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		if s.Kind == StepBranch {
			switch {
			case len(s.Branches) == 0:
				bad(f+".branches", "a branch step needs at least one branch (name, function: a filter module, to:)")
			case len(s.Branches) > MaxOutputs:
				bad(f+".branches", "at most %d, got %d", MaxOutputs, len(s.Branches))
			}
			if s.Function != "" || s.To != "" || s.State || len(s.Outputs) > 0 {
				bad(f+".kind", "a branch step has no function, to:, state or outputs of its own: its branches have them")
			}
			names := map[string]bool{}
			for j, b := range s.Branches {
				bf := fmt.Sprintf("%s.branches[%d]", f, j)
				checkBranchName(bad, bf+".name", b.Name, names)
				if b.Function == "" && j < len(s.Branches)-1 {
					bad(bf+".function", "only the last branch may have no function (it takes every record the others did not)")
				}
				if len(b.Function) > MaxPathLen {
					bad(bf+".function", "at most %d bytes, got %d", MaxPathLen, len(b.Function))
				}
				if b.To != "" {
					p.validateTap(bf+".to", -1, b.To, bad)
				}
			}
			continue
		}
		if len(s.Branches) > 0 {
			bad(f+".branches", "only a branch step has branches")
		}
		if len(s.Outputs) == 0 {
			continue
		}
		if s.Kind != StepMap && s.Kind != StepFilter && s.Kind != StepFlatMap {
			bad(f+".outputs", "only map, filter and flat_map steps route records to named outputs")
		}
		if len(s.Outputs) > MaxOutputs {
			bad(f+".outputs", "at most %d, got %d", MaxOutputs, len(s.Outputs))
		}
		names := map[string]bool{}
		for j, o := range s.Outputs {
			of := fmt.Sprintf("%s.outputs[%d]", f, j)
			checkBranchName(bad, of+".name", o.Name, names)
			if o.To != "" {
				p.validateTap(of+".to", -1, o.To, bad)
			}
		}
	}
	// A step named like a branch or an output ("route.bids") would make
	// from: ambiguous.
	stepAt := map[string]int{}
	for j, s := range p.Steps {
		stepAt[s.Name] = j
	}
	for _, s := range p.Steps {
		for _, part := range s.Parts() {
			if j, ok := stepAt[s.Name+"."+part]; ok {
				bad(fmt.Sprintf("steps[%d].name", j), "%q is also the name of %s of step %s", p.Steps[j].Name, part, s.Name)
			}
		}
	}
}

// checkBranchName checks the name of a branch or output: a step name's
// characters without '.', unique in its step.
func checkBranchName(bad func(field, format string, args ...any), f, name string, names map[string]bool) {
	switch {
	case name == "":
		bad(f, "is required")
	case strings.Contains(name, "."):
		bad(f, "%q: use letters, digits, '_' and '-' (from: names it as <step>.<name>)", name)
	case names[name]:
		bad(f, "%q is used by an earlier one", name)
	default:
		checkName(bad, f, name, MaxStepNameLen)
	}
	names[name] = true
}

// Parts returns the names of a step's branches or named outputs.
func (s *Step) Parts() []string {
	var out []string
	for _, b := range s.Branches {
		out = append(out, b.Name)
	}
	for _, o := range s.Outputs {
		out = append(out, o.Name)
	}
	return out
}

// expandOutputs turns each branch step and each step's named outputs into
// steps of their own, named <step>.<branch>, after validation: every
// branch becomes a filter step running its function (the records it drops
// feed the next branch), a branch without a function and a named output a
// step that passes on what is put in place for it. A step reading the step
// before a routing step then names it, since the outputs' steps now follow
// it. Hot swap, metrics, status, dead letters and the dashboard see these
// steps as the pipeline's steps.
func (p *Pipeline) expandOutputs() {
	if !slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Kind == StepBranch || len(s.Outputs) > 0 }) {
		return
	}
	var steps []Step
	for i, s := range p.Steps {
		if len(s.From) == 0 && len(steps) > 0 && steps[len(steps)-1].Part.Of != "" {
			// The previous step of the file has made steps of its
			// outputs: read its own output (validation refused a step
			// without from: after a branch step).
			s.From = []string{p.Steps[i-1].Name}
		}
		switch {
		case s.Kind == StepBranch:
			for j, b := range s.Branches {
				st := Step{Name: s.Name + "." + b.Name, Kind: StepFilter, Function: b.Function, To: b.To,
					Part: GraphPart{Of: s.Name, Branch: true, Fed: j > 0}}
				if j == 0 {
					st.From = s.From // none: the previous step, as for any step
				}
				if b.Function == "" {
					st.Kind = StepOutput
				} else {
					st.Limits, st.Config = s.Limits, s.Config // each predicate runs with the step's limits and config
				}
				if j+1 < len(s.Branches) {
					st.Part.Feeds = []int{len(steps) + 1}
				}
				steps = append(steps, st)
			}
		case len(s.Outputs) > 0:
			for j := range s.Outputs {
				s.Part.Feeds = append(s.Part.Feeds, len(steps)+1+j)
			}
			steps = append(steps, s)
			for _, o := range s.Outputs {
				steps = append(steps, Step{Name: s.Name + "." + o.Name, Kind: StepOutput, To: o.To,
					Part: GraphPart{Of: s.Name, Fed: true}})
			}
		default:
			steps = append(steps, s)
		}
	}
	p.Steps = steps
}

// sinkStep is the step of stage st whose output goes to the stage's
// output topic (the sink, or the repartition topic behind the stage): the
// stage's last step of the pipeline file, which its named outputs' steps
// may follow; -1 when that is a branch step, which has no output of its
// own.
func (p *Pipeline) sinkStep(st Stage) int {
	for s := st.To - 1; s >= st.From; s-- {
		part := p.Steps[s].Part
		switch {
		case part.Of == "":
			return s
		case part.Branch:
			return -1
		}
	}
	return -1
}
