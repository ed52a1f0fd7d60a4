package main

import (
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestPoison(t *testing.T) {
	values := []string{"ok", "poison", "panic", "code77", "straße", "after"}
	in := make([]eddy.Record, len(values))
	for i, v := range values {
		in[i] = eddy.Record{Key: []byte{byte('a' + i)}, Value: []byte(v), Timestamp: int64(i)}
	}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		code   int
		reason string
		value  string
	}{
		{0, "", "OK"},
		{eddytest.Rejected, "poison record", ""},
		{eddytest.Panic, "panic record", ""},
		{77, "code 77 record", ""},
		{0, "", "STRAßE"},
		{0, "", "AFTER"},
	}
	for i, w := range want {
		r := res[i]
		if r.Code != w.code || r.Reason != w.reason {
			t.Errorf("%q: code %d reason %q, want %d %q", values[i], r.Code, r.Reason, w.code, w.reason)
		}
		if w.code == 0 && (len(r.Records) != 1 || string(r.Records[0].Value) != w.value || r.Records[0].Timestamp != int64(i)) {
			t.Errorf("%q: output %+v", values[i], r.Records)
		}
	}
}
