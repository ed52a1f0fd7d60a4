package nxbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/eddy-streams/eddy/runtime"
)

// TestQueriesMatchTheReference runs every query on 30,000 generated events
// in process, with the native functions and with the Go guests, and checks
// the output against the nexmark package's reference results.
func TestQueriesMatchTheReference(t *testing.T) {
	const n = 30_000
	evs, err := Events(n)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := runtime.NewEngine(runtime.WithCacheDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	testdata, _ := filepath.Abs("../../testdata")
	for _, native := range []bool{true, false} {
		for _, q := range Names() {
			name := q + "/native"
			if !native {
				name = q + "/go"
				if _, err := os.Stat(filepath.Join(testdata, "go", "nx-q1.wasm")); err != nil {
					t.Fatalf("the Nexmark guests are missing: %v", err)
				}
			}
			t.Run(name, func(t *testing.T) {
				rep, err := RunInProcess(context.Background(), Options{Query: q, Events: n, Native: native, Testdata: testdata,
					Keep: true, Engine: eng, Chunk: 3_000, BatchSize: 128})
				if err != nil {
					t.Fatal(err)
				}
				if err := Queries[q].Check(evs, rep.Out); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if rep.Outputs == 0 {
					t.Fatalf("%s: no output", q)
				}
			})
		}
	}
}

// TestNamesInQueryOrder: the queries are listed by number, a variant
// after its query.
func TestNamesInQueryOrder(t *testing.T) {
	ns := Names()
	i5, i5c, i10 := slices.Index(ns, "q5"), slices.Index(ns, "q5-counts"), slices.Index(ns, "q10")
	if ns[0] != "q0" || i5 < 0 || i5c != i5+1 || i10 < i5c {
		t.Fatalf("queries out of order: %v", ns)
	}
}
