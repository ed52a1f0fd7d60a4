package host

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/state"
)

func TestClaimDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b") // created on the first claim
	d, err := ClaimDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Created || !regexp.MustCompile(`^eddy-[0-9a-f]{12}$`).MatchString(d.NodeID) {
		t.Fatalf("first claim: id %q, created %v; want a generated eddy-<hex> id", d.NodeID, d.Created)
	}
	// A second claim, in this process as from another, is refused while
	// the first holds the directory.
	if _, err := ClaimDataDir(dir); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second claim of a held directory: %v, want ErrDataDirInUse", err)
	}
	// The state database opens in the claimed directory (Badger locks the
	// directory itself, the claim a file in it).
	db, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatalf("state database in a claimed directory: %v", err)
	}
	db.Close()
	// A directory inside it is another node's.
	sub, err := ClaimDataDir(filepath.Join(dir, "w1"))
	if err != nil {
		t.Fatal(err)
	}
	if sub.NodeID == d.NodeID {
		t.Fatalf("two directories got the same id %q", d.NodeID)
	}
	sub.Release()
	first := d.NodeID
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	d, err = ClaimDataDir(dir)
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	defer d.Release()
	if d.NodeID != first || d.Created {
		t.Fatalf("reclaimed directory: id %q (created %v), want %q kept", d.NodeID, d.Created, first)
	}
}

func TestClaimDataDirDistinctIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		d, err := ClaimDataDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if seen[d.NodeID] {
			t.Fatalf("id %q generated twice", d.NodeID)
		}
		seen[d.NodeID] = true
		d.Release()
	}
}

func TestClaimDataDirBadIDFile(t *testing.T) {
	for _, tc := range []struct{ name, content, err string }{
		{"empty", "\n", "empty node id"},
		{"space", "a b\n", "only letters"},
		{"long", strings.Repeat("x", 1<<20), "at most 249"},
		{"control", "eddy-\x1b[2J", "only letters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, NodeIDFile), []byte(tc.content), 0o644)
			d, err := ClaimDataDir(dir)
			if err == nil {
				d.Release()
				t.Fatalf("claimed with node-id %q as id %q", tc.content, d.NodeID)
			}
			if !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "remove the file") {
				t.Fatalf("error %q does not say %q and how to fix it", err, tc.err)
			}
			// The failed claim released the directory.
			f, err := lockDir(filepath.Join(dir, lockFile))
			if err != nil {
				t.Fatalf("directory still locked after a failed claim: %v", err)
			}
			f.Close()
		})
	}
}

func TestValidateNodeID(t *testing.T) {
	for _, ok := range []string{"a", "eddy-0123456789ab", "node_1.prod-eu", strings.Repeat("x", 249)} {
		if err := ValidateNodeID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 250), "a/b", "ö", "a b", "x\n"} {
		if ValidateNodeID(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
