package pipeline

import (
	"fmt"
	"strings"
	"testing"
)

// branching is a pipeline with a routing step, a branch step that reads
// one of its outputs, and a step that merges a branch with the routing
// step's own output.
const branching = `name: fan
source: {topics: [in]}
steps:
  - name: route
    kind: map
    function: route.wasm
    outputs: [objects, {name: numbers, to: numbers}]
  - name: kinds
    kind: branch
    from: [route.objects]
    branches:
      - {name: small, function: small.wasm, to: small}
      - {name: odd, function: odd.wasm}
      - {name: rest, to: rest}
  - {name: tag, kind: map, function: tag.wasm, from: [kinds.odd, route]}
sink: {topic: out}
`

func TestBranchesBecomeSteps(t *testing.T) {
	p, err := ParsePipeline("p.yaml", []byte(branching))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Steps {
		got = append(got, fmt.Sprintf("%s:%s:%s:%v:%v:%v", s.Name, s.Kind, s.To, s.From, s.Part.Fed, s.Part.Feeds))
	}
	want := []string{
		"route:map::[]:false:[1 2]",
		"route.objects:output::[]:true:[]",
		"route.numbers:output:numbers:[]:true:[]",
		"kinds.small:filter:small:[route.objects]:false:[4]",
		"kinds.odd:filter::[]:true:[5]",
		"kinds.rest:output:rest:[]:true:[]",
		"tag:map::[kinds.odd route]:false:[]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := fmt.Sprint(p.StepInputs()); got != "[[-1] [] [] [1] [] [] [4 0]]" {
		t.Fatalf("step inputs %s", got)
	}
	if st := p.Stages(); len(st) != 1 || st[0].Out != 6 {
		t.Fatalf("stages %+v: want one, whose output is step tag's", st)
	}

	// A routing step last: the sink takes its own output, not its
	// outputs' steps that follow it.
	p, err = ParsePipeline("p.yaml", []byte(`name: r
source: {topics: [in]}
steps:
  - {name: up, kind: map, function: up.wasm}
  - {name: route, kind: map, function: route.wasm, outputs: [{name: a, to: ta}, {name: b, to: tb}]}
sink: {topic: out}
`))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stages(); st[0].Out != 1 || st[0].To != 4 {
		t.Fatalf("stages %+v: want the output of step route (1) of 4 steps", st)
	}
	// A branch step last: no sink, the stage's output is none.
	p, err = ParsePipeline("p.yaml", []byte(`name: b
source: {topics: [in]}
steps:
  - name: by-type
    kind: branch
    branches: [{name: a, function: a.wasm, to: ta}, {name: b, to: tb}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stages(); st[0].Out != -1 || st[0].Output != "" {
		t.Fatalf("stages %+v: want no output", st)
	}
}

func TestBranchErrors(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"branch read whole", "from: [kinds.odd, route]", "from: [kinds, route]",
			`steps[2].from: "kinds" is a branch step, which has no output of its own: name its branches (kinds.small, kinds.odd, kinds.rest)`},
		{"unknown branch", "from: [kinds.odd, route]", "from: [kinds.even, route]",
			`steps[2].from: "kinds.even" is not a step of the pipeline, nor a branch or output of one`},
		{"after a branch", "function: tag.wasm, from: [kinds.odd, route]}", "function: tag.wasm}",
			`steps[2]: step tag follows branch step kinds, which has no output of its own: name the branches it reads in from: (kinds.small, kinds.odd, kinds.rest)`},
		{"branch nowhere", "{name: rest, to: rest}", "{name: rest}", "steps[1].branches[2]: branch kinds.rest goes nowhere"},
		{"output nowhere", "from: [kinds.odd, route]", "from: [kinds.odd]",
			"steps[0]: the output of step route goes nowhere"},
		{"named output nowhere", "outputs: [objects, {name: numbers, to: numbers}]", "outputs: [objects, numbers, extra]",
			"steps[0].outputs[2]: output route.extra goes nowhere"},
		{"function in the middle", "{name: small, function: small.wasm, to: small}", "{name: small, to: small}",
			"steps[1].branches[0].function: only the last branch may have no function"},
		{"same branch name", "{name: rest, to: rest}", "{name: odd, to: rest}", `steps[1].branches[2].name: "odd" is used by an earlier one`},
		{"dotted name", "outputs: [objects,", "outputs: [ob.jects,", `steps[0].outputs[0].name: "ob.jects": use letters`},
		{"branch function", "    kind: branch\n", "    kind: branch\n    function: f.wasm\n", "steps[1].kind: a branch step has no function"},
		{"no branches", "      - {name: small, function: small.wasm, to: small}\n      - {name: odd, function: odd.wasm}\n      - {name: rest, to: rest}\n", "      []\n",
			"steps[1].branches: a branch step needs at least one branch"},
		{"outputs on a key_by", "  - {name: tag, kind: map, function: tag.wasm, from: [kinds.odd, route]}",
			"  - {name: tag, kind: key_by, field: x, from: [kinds.odd, route], outputs: [z]}", "steps[2].outputs: only map, filter and flat_map steps route records"},
		{"name clash", "  - {name: tag, kind: map,", "  - {name: kinds.odd, kind: map,", `steps[2].name: "kinds.odd" is also the name of odd of step kinds`},
		{"branches on a map", "    outputs: [objects, {name: numbers, to: numbers}]", "    outputs: [objects, {name: numbers, to: numbers}]\n    branches: [{name: x, to: x}]",
			"steps[0].branches: only a branch step has branches"},
		{"tap reads a source", "{name: rest, to: rest}", "{name: rest, to: in}", `steps[1].branches[2].to: "in" is a topic the pipeline reads`},
		{"sink after a branch", "  - {name: tag, kind: map, function: tag.wasm, from: [kinds.odd, route]}\n", "",
			"sink.topic: the last step is a branch step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(branching, tc.old, tc.new, 1)
			if src == branching {
				t.Fatalf("%q not in the pipeline", tc.old)
			}
			_, err := ParsePipeline("p.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The sink is needed when the last step is not a branch step.
	src := strings.Replace(branching, "sink: {topic: out}\n", "", 1)
	if _, err := ParsePipeline("p.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "sink.topic: is required") {
		t.Fatalf("no sink: %v", err)
	}
}
