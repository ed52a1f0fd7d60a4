package admin

import (
	"os/exec"
	"strings"
	"testing"
)

// The admin API knows nothing of Kafka or of the node: the node implements
// Backend, and cmd/eddy's admin commands do not pull in the host.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(dep, "github.com/twmb/franz-go"),
			strings.HasPrefix(dep, "github.com/tetratelabs/wazero"),
			strings.HasPrefix(dep, "github.com/dgraph-io/badger"),
			dep == "github.com/eddy-streams/eddy/host",
			strings.HasPrefix(dep, "github.com/eddy-streams/eddy/") &&
				dep != "github.com/eddy-streams/eddy/registry" && dep != "github.com/eddy-streams/eddy/host/admin":
			t.Errorf("host/admin depends on %s", dep)
		}
	}
}
