package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/conformance"
	"github.com/eddy-streams/eddy/runtime"
)

// guestLanguages lists the folders of testdata whose modules must all pass.
var guestLanguages = []string{"go", "rust", "c", "assemblyscript"}

func TestEveryGuestConforms(t *testing.T) {
	cache := t.TempDir()
	for _, lang := range guestLanguages {
		mods, _ := filepath.Glob(filepath.Join("..", "testdata", lang, "*.wasm"))
		if len(mods) < 9 {
			t.Errorf("%s: %d modules in testdata/%s, want the 9 reference functions", lang, len(mods), lang)
		}
		for _, path := range mods {
			t.Run(lang+"/"+filepath.Base(path), func(t *testing.T) {
				wasm, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := conformance.Run(context.Background(), filepath.Base(path), wasm, conformance.Options{
					Engine: []runtime.Option{runtime.WithCacheDir(cache)},
				})
				if err != nil {
					t.Fatal(err)
				}
				refs := 0
				for _, r := range rep.Results {
					if !r.Passed {
						t.Errorf("%s: %s", r.Case, r.Detail)
					}
					if len(r.Case) > 10 && r.Case[:10] == "reference/" {
						refs++
					}
				}
				if refs == 0 {
					t.Errorf("no reference case ran: manifest name %q is not a reference function", rep.Manifest.Name)
				}
			})
		}
	}
}

// TestEndlessGuestStopsTheSuite runs the suite on a module whose calls never
// end: the first case fails with the timeout and the others are reported
// as not run, instead of each waiting out a deadline per call and per
// bisection step.
func TestEndlessGuestStopsTheSuite(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wat", "loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(context.Background(), "loop", wasm, conformance.Options{
		Engine: []runtime.Option{runtime.WithoutCache(), runtime.WithCallTimeout(50 * time.Millisecond)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) < 2 {
		t.Fatalf("%d results, want every process case", len(rep.Results))
	}
	first := rep.Results[0]
	if first.Passed || !strings.Contains(first.Detail, "did not finish within 50ms") {
		t.Fatalf("first case %+v, want a timeout", first)
	}
	for _, r := range rep.Results[1:] {
		if r.Passed || r.Detail != "not run: case "+first.Case+" timed out" {
			t.Fatalf("case %+v, want not run", r)
		}
	}
}
