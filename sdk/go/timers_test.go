package eddy_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// TestTimers registers a filter that sets and moves a timer per key and a
// timer handler, and drives them through eddytest: the timers set, the
// manifest's kind, the records a firing returns (a zero timestamp becomes
// the timer's time) and the refusals without a store.
func TestTimers(t *testing.T) {
	register(t, func() {
		eddy.Filter(func(r eddy.Record) (bool, error) {
			if v, ok, err := eddy.StateGet(r.Key); err != nil {
				return false, err
			} else if ok {
				prev, _ := strconv.ParseInt(string(v), 10, 64)
				if err := eddy.DeleteTimer(r.Key, eddy.EventTime, prev+100); err != nil {
					return false, err
				}
			}
			if err := eddy.StatePut(r.Key, strconv.AppendInt(nil, r.Timestamp, 10)); err != nil {
				return false, err
			}
			return false, eddy.SetTimer(r.Key, eddy.EventTime, r.Timestamp+100)
		})
		eddy.OnTimer(func(tm eddy.Timer) ([]eddy.Record, error) {
			if string(tm.Key) == "bad" {
				return nil, errors.New("refused")
			}
			now := eddy.CurrentTime(tm.Domain)
			return []eddy.Record{{Key: tm.Key, Value: strconv.AppendInt(nil, now, 10)}, {Key: tm.Key, Timestamp: 7}}, nil
		})
	})
	m, err := eddytest.ReadManifest()
	if err != nil || len(m.Kinds) != 2 || m.Kinds[1] != "timer" {
		t.Fatalf("manifest kinds %v (%v), want [process timer]", m.Kinds, err)
	}
	if _, err := eddytest.Process(rec("a", "", 10), rec("b", "", 20), rec("a", "", 30)); err != nil {
		t.Fatal(err)
	}
	ts := eddytest.Timers()
	if len(ts) != 2 || string(ts[0].Key) != "b" || ts[0].Time != 120 || string(ts[1].Key) != "a" || ts[1].Time != 130 {
		t.Fatalf("timers %+v, want b@120 and a@130 (a's first one moved)", ts)
	}
	if eddy.CurrentTime(eddy.EventTime) != eddy.NoTime {
		t.Errorf("CurrentTime before it is set: %d, want NoTime", eddy.CurrentTime(eddy.EventTime))
	}
	eddytest.SetCurrentTime(eddy.EventTime, 125)
	res, err := eddytest.FireTimers(ts[0], eddytest.Timer{Key: []byte("bad"), Time: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Code != eddytest.OK || len(res[0].Records) != 2 ||
		string(res[0].Records[0].Value) != "125" || res[0].Records[0].Timestamp != 120 || res[0].Records[1].Timestamp != 7 {
		t.Fatalf("firing b: %+v", res[0])
	}
	if res[1].Code != eddytest.Rejected {
		t.Errorf("a failing timer handler: code %d, want REJECTED", res[1].Code)
	}
	eddytest.SetStateMode(eddytest.StateNone)
	out, err := eddytest.Process(rec("c", "", 1))
	if err != nil || out[0].Code == eddytest.OK {
		t.Fatalf("without a store: %+v (%v), want a refusal", out, err)
	}
	if err := eddy.SetTimer([]byte("x"), eddy.EventTime, 1); !errors.Is(err, eddy.ErrNoState) {
		t.Errorf("SetTimer without a store: %v, want ErrNoState", err)
	}
	eddytest.SetStateMode(eddytest.StateFailing)
	if err := eddy.SetTimer([]byte("x"), eddy.EventTime, 1); !errors.Is(err, eddy.ErrTimerLimit) {
		t.Errorf("SetTimer refused: %v, want ErrTimerLimit", err)
	}
}

// TestConfig reads config entries through eddytest's stand-in: present,
// empty, absent, and longer than the SDK's first buffer.
func TestConfig(t *testing.T) {
	register(t, func() {})
	long := strings.Repeat("x", 1000)
	eddytest.SetConfig(map[string]string{"prefix": "p-", "empty": "", "long": long})
	if v, ok := eddy.Config("prefix"); !ok || v != "p-" {
		t.Errorf("prefix: %q %v", v, ok)
	}
	if v, ok := eddy.Config("empty"); !ok || v != "" {
		t.Errorf("empty: %q %v", v, ok)
	}
	if v, ok := eddy.Config("long"); !ok || v != long {
		t.Errorf("long: %d bytes, %v", len(v), ok)
	}
	if _, ok := eddy.Config("missing"); ok {
		t.Error("missing: found")
	}
}
