// Package lint holds tests that keep the project's package boundaries true
// (DESIGN.md: cmd → host → {runtime, state, windowing} → abi).
package lint

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/eddy-streams/eddy"

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// owners says which packages (by prefix) may import a dependency (by prefix).
var owners = []struct {
	dep     string
	allowed []string
	except  string // a part of dep with a rule of its own
}{
	{"github.com/tetratelabs/wazero", []string{module + "/runtime"}, ""},
	{"github.com/dgraph-io/badger", []string{module + "/state"}, ""},
	// Besides the node and its CLI: the tests' broker (internal/testkafka)
	// and the Kafka Streams benchmark's driver, which talk to Kafka as
	// tools, not as part of the node.
	{"github.com/twmb/franz-go", []string{module + "/host", module + "/cmd/eddy", module + "/internal/testkafka", module + "/bench/kstreams"}, "github.com/twmb/franz-go/pkg/sr"},
	// The schema registry's client is the record formats' (schemas),
	// its fake the embedded registry's (host/embedded); not Kafka.
	{"github.com/twmb/franz-go/pkg/sr", []string{module + "/schemas", module + "/host", module + "/cmd/eddy"}, ""},
}

func TestImportBoundaries(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			for _, o := range owners {
				if !strings.HasPrefix(imp, o.dep) || o.except != "" && strings.HasPrefix(imp, o.except) {
					continue
				}
				ok := false
				for _, a := range o.allowed {
					if p.ImportPath == a || strings.HasPrefix(p.ImportPath, a+"/") {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s imports %s; only %v may", p.ImportPath, imp, o.allowed)
				}
			}
			if strings.HasPrefix(p.ImportPath, module+"/abi") && strings.HasPrefix(imp, module+"/") && !strings.HasPrefix(imp, module+"/abi") {
				t.Errorf("%s imports %s; abi must not import other Eddy packages", p.ImportPath, imp)
			}
			// The pipeline file describes, the node runs: package pipeline
			// knows nothing of the runtime, of state or of Kafka.
			if strings.HasPrefix(p.ImportPath, module+"/pipeline") {
				for _, dep := range []string{"/host", "/cmd", "/runtime", "/state", "/registry", "/join"} {
					if strings.HasPrefix(imp, module+dep) {
						t.Errorf("%s imports %s; a pipeline file is read without the node's parts", p.ImportPath, imp)
					}
				}
				if strings.HasPrefix(imp, "github.com/twmb/franz-go") {
					t.Errorf("%s imports %s; a pipeline file is read without Kafka", p.ImportPath, imp)
				}
			}
			// The executor of a stage's steps runs under two drivers (the
			// Kafka node and the in-process one): it knows neither Kafka
			// nor the node, nor how state is stored (docs/design.md).
			if strings.HasPrefix(p.ImportPath, module+"/graph") {
				for _, dep := range []string{"/host", "/cmd", "/state", "/registry"} {
					if strings.HasPrefix(imp, module+dep) {
						t.Errorf("%s imports %s; the step executor gets what it needs of its driver through graph.Deps", p.ImportPath, imp)
					}
				}
				if strings.HasPrefix(imp, "github.com/twmb/franz-go") {
					t.Errorf("%s imports %s; the step executor runs without Kafka", p.ImportPath, imp)
				}
			}
			for _, low := range []string{"/runtime", "/state", "/windowing", "/pipeline", "/graph"} {
				if strings.HasPrefix(p.ImportPath, module+low) && (strings.HasPrefix(imp, module+"/host") || strings.HasPrefix(imp, module+"/cmd")) {
					t.Errorf("%s imports %s; dependencies point from host to %s, not back", p.ImportPath, imp, low)
				}
			}
		}
	}
}

// TestSDKHasNoDependencies keeps the guest SDK modules free of requirements.
func TestSDKHasNoDependencies(t *testing.T) {
	cmd := exec.Command("go", "list", "-m", "all")
	cmd.Dir = "../../sdk/go"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all in sdk/go: %v", err)
	}
	mods := strings.Fields(strings.TrimSpace(string(out)))
	if len(mods) != 1 || mods[0] != module+"/sdk/go" {
		t.Fatalf("sdk/go depends on %v; it must have no dependencies", mods[1:])
	}
}
