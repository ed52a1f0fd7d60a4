package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func fakeDigest(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprint("bogus", i)))
	return hex.EncodeToString(sum[:])
}

// TestBogusChunksAllocateLittle: chunk records whose keys claim many chunks
// of modules that never complete cost what they hold, not what they claim;
// a claim over MaxChunks, or a key without a digest, is refused.
func TestBogusChunksAllocateLittle(t *testing.T) {
	s := NewState()
	for _, key := range []string{"m/bogus/0/65536", "m/" + fakeDigest(0) + "/0/65536", "m/" + fakeDigest(0) + "/5/4"} {
		if _, err := s.Apply(Record{Key: []byte(key), Value: []byte("x")}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", key, err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 3000 {
		if _, err := s.Apply(Record{Key: []byte(fmt.Sprintf("m/%s/0/%d", fakeDigest(i), MaxChunks)), Value: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// 3000 claims of 4096 chunks: 295 MB of slice headers if allocated
	// from the claim.
	got := after.TotalAlloc - before.TotalAlloc
	if got > 32<<20 {
		t.Fatalf("3000 one-byte chunks allocated %d bytes", got)
	}
	t.Logf("3000 one-byte chunks claiming %d chunks each allocated %d bytes", MaxChunks, got)
	if len(s.chunks) > MaxPendingModules {
		t.Fatalf("%d partial modules held, want at most %d", len(s.chunks), MaxPendingModules)
	}
}

// TestPendingModulesBounded: big chunks of modules that never complete, and
// complete modules no event uses, are held up to MaxPendingBytes; a module
// an event uses is kept.
func TestPendingModulesBounded(t *testing.T) {
	s := NewState()
	used := []byte("the module in use")
	deploy(t, s, used, Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Time: time.Now()})
	big := bytes.Repeat([]byte("x"), 1<<20)
	for i := range 600 {
		if _, err := s.Apply(Record{Key: []byte(fmt.Sprintf("m/%s/0/2", fakeDigest(i))), Value: big}); err != nil {
			t.Fatal(err)
		}
		if s.pending > MaxPendingBytes {
			t.Fatalf("after %d chunks: %d pending bytes, over %d", i+1, s.pending, MaxPendingBytes)
		}
	}
	for i := range 300 {
		apply(t, s, ModuleRecords(append(big[:1<<20:1<<20], byte(i), byte(i>>8)), 0)...)
	}
	if s.pending > MaxPendingBytes || len(s.unused)+len(s.chunks) > MaxPendingModules {
		t.Fatalf("%d pending bytes, %d modules", s.pending, len(s.unused)+len(s.chunks))
	}
	if _, ok := s.Module(Digest(used)); !ok {
		t.Fatal("the module in use was dropped")
	}
	// A module over MaxModuleSize is refused as its chunks arrive.
	d := fakeDigest(-1)
	var err error
	for i := 0; err == nil && i < 200; i++ {
		_, err = s.Apply(Record{Key: []byte(fmt.Sprintf("m/%s/%d/200", d, i)), Value: big})
	}
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("a module over %d bytes: %v", MaxModuleSize, err)
	}
	if big := make([]byte, MaxEventSize+1); true {
		if _, err := s.Apply(Record{Key: []byte("e/p/s/2/x"), Value: big}); !errors.Is(err, ErrMalformed) {
			t.Fatalf("an event over %d bytes: %v", MaxEventSize, err)
		}
	}
}

// TestSignedEvents: with a pipeline Required, an unsigned, mis-signed or
// tampered event is refused and the signed one takes effect; another
// pipeline's events are taken as they come.
func TestSignedEvents(t *testing.T) {
	key, other := Key("tok"), Key("other")
	s := NewState()
	s.Require("p", key)
	module := []byte("module one")
	apply(t, s, ModuleRecords(module, 0)...)
	ev, err := s.Next(Event{Pipeline: "p", Step: "s", Action: ActionDeploy, Digest: Digest(module), Time: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tampered := ev
	Sign(&tampered, key)
	tampered.Note = "changed after signing"
	misSigned := ev
	Sign(&misSigned, other)
	for name, e := range map[string]Event{"unsigned": ev, "mis-signed": misSigned, "tampered": tampered} {
		r, _ := EventRecord(&e)
		if got, err := s.Apply(r); !errors.Is(err, ErrUnverified) || got != nil {
			t.Errorf("%s: %v, %v; want ErrUnverified", name, got, err)
		}
	}
	if s.Step("p", "s").Live != nil {
		t.Fatal("a refused event took effect")
	}
	signed := ev
	if err := Sign(&signed, key); err != nil {
		t.Fatal(err)
	}
	r, _ := EventRecord(&signed)
	if got, err := s.Apply(r); err != nil || got == nil || s.Step("p", "s").Live.Digest != Digest(module) {
		t.Fatalf("signed: %v, %v", got, err)
	}
	// Another pipeline is not Required here.
	deploy(t, s, module, Event{Pipeline: "q", Step: "s", Action: ActionDeploy, Time: time.Now()})
	// Resets of a Required pipeline too.
	reset := Event{Pipeline: "p", Version: 1, Action: ActionReset, To: "earliest", Time: time.Now(), ID: "r1"}
	rr, _ := EventRecord(&reset)
	if got, err := s.Apply(rr); !errors.Is(err, ErrUnverified) || got != nil || s.Resets("p").Pending != nil {
		t.Fatalf("unsigned reset: %v, %v", got, err)
	}
	Sign(&reset, key)
	rr, _ = EventRecord(&reset)
	if got, err := s.Apply(rr); err != nil || got == nil || s.Resets("p").Pending == nil {
		t.Fatalf("signed reset: %v, %v", got, err)
	}
	// A reader without a key refuses every step event of its pipeline,
	// and takes resets unverified.
	s2 := NewState()
	s2.Require("p", nil)
	apply(t, s2, ModuleRecords(module, 0)...)
	if _, err := s2.Apply(r); !errors.Is(err, ErrUnverified) {
		t.Fatalf("no key: %v", err)
	}
	unsignedReset := Event{Pipeline: "p", Version: 1, Action: ActionReset, To: "earliest", Time: time.Now(), ID: "r2"}
	rr, _ = EventRecord(&unsignedReset)
	if got, err := s2.Apply(rr); err != nil || got == nil {
		t.Fatalf("no key, a reset: %v, %v", got, err)
	}
}

func TestLocalRoundTrip(t *testing.T) {
	r := Record{Key: []byte("e/p/s/1/x"), Value: []byte(`{"a":1}`)}
	got, err := DecodeLocal(AppendLocal(nil, r))
	if err != nil || !bytes.Equal(got.Key, r.Key) || !bytes.Equal(got.Value, r.Value) {
		t.Fatalf("%q %q %v", got.Key, got.Value, err)
	}
	for _, v := range [][]byte{nil, {0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {5, 'a'}} {
		if _, err := DecodeLocal(v); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: %v", v, err)
		}
	}
}

// TestUnverifiedEventsBounded: events of a pipeline the reader does not
// verify are kept up to MaxUnverifiedBytes, then refused.
func TestUnverifiedEventsBounded(t *testing.T) {
	s := NewState()
	s.Require("mine", Key("tok"))
	module := []byte("m")
	apply(t, s, ModuleRecords(module, 0)...)
	var kept int64
	var err error
	for v := 1; err == nil; v++ {
		ev := Event{Pipeline: "other", Step: "s", Version: v, Action: ActionDeploy, Digest: Digest(module),
			Note: strings.Repeat("n", MaxNoteSize), Time: time.Unix(1, 0), ID: fmt.Sprint(v)}
		r, _ := EventRecord(&ev)
		if _, err = s.Apply(r); err == nil {
			kept += int64(len(r.Value))
		}
	}
	if !errors.Is(err, ErrMalformed) || kept > MaxUnverifiedBytes || kept < MaxUnverifiedBytes-2*MaxEventSize {
		t.Fatalf("kept %d bytes of unverified events, then %v", kept, err)
	}
	// The reader's own, verified, pipeline is not bound by it.
	ev := Event{Pipeline: "mine", Step: "s", Version: 1, Action: ActionDeploy, Digest: Digest(module), Time: time.Unix(1, 0)}
	Sign(&ev, Key("tok"))
	r, _ := EventRecord(&ev)
	if got, err := s.Apply(r); err != nil || got == nil {
		t.Fatalf("a verified event after the limit: %v, %v", got, err)
	}
}
