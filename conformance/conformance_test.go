package conformance_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/conformance"
	"github.com/eddy-streams/eddy/runtime"
)

// guestLanguages lists the folders of testdata whose modules must all pass.
var guestLanguages = []string{"go", "rust", "c", "assemblyscript"}

// everySDK are the reference functions every language implements.
var everySDK = []string{"passthrough", "upper", "filter", "split", "route", "poison", "stats", "counter", "joiner", "wordkey", "timeout", "prefix"}

func TestEveryGuestConforms(t *testing.T) {
	cache := t.TempDir()
	for _, lang := range guestLanguages {
		mods, _ := filepath.Glob(filepath.Join("..", "testdata", lang, "*.wasm"))
		for _, ref := range everySDK {
			if !slices.Contains(mods, filepath.Join("..", "testdata", lang, ref+".wasm")) {
				t.Errorf("%s: no testdata/%s/%s.wasm: every language implements the reference functions %v", lang, lang, ref, everySDK)
			}
		}
		for _, path := range mods {
			t.Run(lang+"/"+filepath.Base(path), func(t *testing.T) {
				wasm, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// Each module is the reference function it is named after.
				ref := strings.TrimSuffix(filepath.Base(path), ".wasm")
				rep, err := conformance.Run(context.Background(), filepath.Base(path), wasm, conformance.Options{
					Engine: []runtime.Option{runtime.WithCacheDir(cache)}, Reference: ref,
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
				if refs == 0 || rep.Manifest.Name != ref {
					t.Errorf("%d reference cases ran for %q, manifest name %q", refs, ref, rep.Manifest.Name)
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

// TestRunHasATimeLimit: a run is bounded as a whole, not only per call. A
// guest whose calls never end, under a call deadline of an hour, is stopped
// at the run's limit, with an error naming the case.
func TestRunHasATimeLimit(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wat", "loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conformance.Run(context.Background(), "loop", wasm, conformance.Options{
		Engine:  []runtime.Option{runtime.WithoutCache(), runtime.WithCallTimeout(time.Hour)},
		Timeout: 200 * time.Millisecond,
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stopped in case process/batch-sizes after 200ms, the run's time limit") {
		t.Fatalf("err = %v", err)
	}
}

// TestReferenceChecksAreExplicit runs a correct module whose manifest is
// named upper (a filter that drops every record): without Reference it
// passes, as any function would, and the reference cases run only when
// asked for, failing with what it did and what upper must do.
func TestReferenceChecksAreExplicit(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wat", "namedupper.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	opts := conformance.Options{Calls: 100, Engine: []runtime.Option{runtime.WithoutCache()}}
	rep, err := conformance.Run(context.Background(), "namedupper", wasm, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Manifest.Name != "upper" || !rep.Passed() {
		t.Fatalf("manifest %q, results %+v: want upper, all passed", rep.Manifest.Name, rep.Results)
	}
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Case, "reference/") {
			t.Fatalf("reference case %s ran without Reference", r.Case)
		}
	}
	opts.Reference = "upper"
	rep, err = conformance.Run(context.Background(), "namedupper", wasm, opts)
	if err != nil {
		t.Fatal(err)
	}
	last := rep.Results[len(rep.Results)-1]
	if last.Case != "reference/upper/upper-cases" || last.Passed || !strings.Contains(last.Detail, "got: \n") ||
		!strings.Contains(last.Detail, `want: k="Key" v="HELLO WÖRLD ÀÞ" t=5;`) {
		t.Fatalf("last case %+v, want upper-cases failed with got and want", last)
	}
	opts.Reference = "uper"
	if _, err := conformance.Run(context.Background(), "namedupper", wasm, opts); err == nil || !strings.Contains(err.Error(), `no reference function "uper"; there are counter, dedupe, filter`) {
		t.Fatalf("got %v", err)
	}
}

// TestMergeConsistencyFailsWhenEveryRecordIsRefused: a function that
// refuses every record used to pass aggregate/merge-consistency, comparing
// initial accumulators with each other.
func TestMergeConsistencyFailsWhenEveryRecordIsRefused(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wat", "refuseall.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(context.Background(), "refuseall", wasm, conformance.Options{Calls: 100, Engine: []runtime.Option{runtime.WithoutCache()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Case == "aggregate/merge-consistency" {
			if r.Passed || !strings.Contains(r.Detail, "every record was refused") {
				t.Fatalf("%+v, want a failure: every record was refused", r)
			}
			return
		}
	}
	t.Fatalf("no merge-consistency case in %+v", rep.Results)
}
