package main

import (
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name  string
		value string
		null  bool
		code  int
		kept  bool
	}{
		{"at threshold", `{"amount": 100}`, false, 0, true},
		{"above", `{"id": 1, "amount": 250.75, "tags": ["a"]}`, false, 0, true},
		{"exponent", `{"amount": 1e3}`, false, 0, true},
		{"huge", `{"amount": 1e400}`, false, 0, true},
		{"below", `{"amount": 99.99}`, false, 0, false},
		{"negative", `{"amount": -500}`, false, 0, false},
		{"missing", `{"total": 500}`, false, 0, false},
		{"string amount", `{"amount": "500"}`, false, 0, false},
		{"null amount", `{"amount": null}`, false, 0, false},
		{"nested only", `{"order": {"amount": 500}}`, false, 0, false},
		{"in a string only", `{"note": "{\"amount\": 500}"}`, false, 0, false},
		{"nested and top level", `{"order": {"amount": 5}, "amount": 500}`, false, 0, true},
		{"last duplicate wins", `{"amount": 500, "amount": 5}`, false, 0, false},
		{"empty object", `{}`, false, 0, false},
		{"array", `[{"amount": 500}]`, false, eddytest.BadInput, false},
		{"number", `500`, false, eddytest.BadInput, false},
		{"not json", `amount=500`, false, eddytest.BadInput, false},
		{"truncated", `{"amount": 500`, false, eddytest.BadInput, false},
		{"empty", ``, false, eddytest.BadInput, false},
		{"null value", ``, true, eddytest.BadInput, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eddy.Record{Key: []byte("k"), Value: []byte(tt.value), Timestamp: 9,
				Headers: []eddy.Header{{Key: "h", Value: []byte("v")}}}
			if tt.null {
				r.Value = nil
			}
			res, err := eddytest.Process(r)
			if err != nil {
				t.Fatal(err)
			}
			got := res[0]
			if got.Code != tt.code {
				t.Fatalf("code %d (%s), want %d", got.Code, got.Reason, tt.code)
			}
			if tt.code != 0 {
				return
			}
			if kept := len(got.Records) == 1; kept != tt.kept {
				t.Fatalf("kept %v, want %v", kept, tt.kept)
			}
			if tt.kept {
				out := got.Records[0]
				if string(out.Value) != tt.value || string(out.Key) != "k" || out.Timestamp != 9 || len(out.Headers) != 1 {
					t.Fatalf("kept record changed: %+v", out)
				}
			}
		})
	}
}

func TestKeepZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(`{"id": "x1", "user": {"amount": 1}, "amount": 150.5, "note": "amount"}`)}
	if n := testing.AllocsPerRun(100, func() { keep(r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

func BenchmarkKeep(b *testing.B) {
	r := eddy.Record{Value: []byte(`{"id":"00000042","user":{"name":"someone","amount":3},"amount":142,"note":"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"}`)}
	for b.Loop() {
		keep(r)
	}
}
