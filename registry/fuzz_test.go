package registry

import (
	"bytes"
	"testing"
	"time"
)

// FuzzApply applies a sequence of records, as a node reads them from the
// registry topic or its local copy: it never panics, never holds more than
// the pending limits, and every event that takes effect is in its step's
// history with its module present.
func FuzzApply(f *testing.F) {
	module := []byte("\x00asm\x01\x00\x00\x00 a module")
	var seed []byte
	for _, r := range ModuleRecords(module, 5) {
		seed = AppendLocal(binaryLen(seed, r), r)
	}
	ev := Event{Pipeline: "p", Step: "s", Version: 1, Action: ActionDeploy, Digest: Digest(module), Time: time.Unix(1, 0).UTC(), ID: "x"}
	Sign(&ev, Key("tok"))
	er, _ := EventRecord(&ev)
	seed = AppendLocal(binaryLen(seed, er), er)
	f.Add(seed, false)
	f.Add(seed, true)
	f.Add([]byte("\x10m/bogus/0/65536x"), false)
	f.Fuzz(func(t *testing.T, data []byte, require bool) {
		s := NewState()
		if require {
			s.Require("p", Key("tok"))
		}
		for len(data) > 0 {
			// Records are framed by a uvarint length each, then in the
			// local copy's form.
			r, rest, ok := nextFramed(data)
			if !ok {
				break
			}
			data = rest
			rec, err := DecodeLocal(r)
			if err != nil {
				continue
			}
			got, err := s.Apply(rec)
			if err != nil && got != nil {
				t.Fatalf("an error and an event: %v", err)
			}
			if got != nil && !IsReset(got.Action) {
				h := s.Step(got.Pipeline, got.Step).History
				if len(h) != got.Version || h[got.Version-1].ID != got.ID {
					t.Fatalf("event %+v not in its history", got)
				}
				if got.Digest != "" && got.Action != ActionDiscard && got.Action != ActionPromote {
					if _, ok := s.Module(got.Digest); !ok {
						t.Fatalf("event %+v without its module", got)
					}
				}
			}
			if s.pending > MaxPendingBytes || len(s.chunks)+len(s.unused) > MaxPendingModules+1 {
				t.Fatalf("%d pending bytes, %d pending modules", s.pending, len(s.chunks)+len(s.unused))
			}
		}
		if m, ok := s.Module(Digest(module)); ok && !bytes.Equal(m, module) {
			t.Fatal("module corrupted")
		}
	})
}

// FuzzDecodeLocal: decoding a local copy entry never panics, and a decoded
// record encodes back to the same bytes.
func FuzzDecodeLocal(f *testing.F) {
	f.Add(AppendLocal(nil, Record{Key: []byte("e/p/s/1/x"), Value: []byte("{}")}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := DecodeLocal(v)
		if err != nil {
			return
		}
		if got := AppendLocal(nil, r); !bytes.Equal(got, v) && len(r.Key) > 0 {
			// A non-minimal uvarint decodes too; it re-encodes shorter.
			if r2, err := DecodeLocal(got); err != nil || !bytes.Equal(r2.Key, r.Key) || !bytes.Equal(r2.Value, r.Value) {
				t.Fatalf("round trip: %x → %q %q → %x", v, r.Key, r.Value, got)
			}
		}
	})
}

func binaryLen(dst []byte, r Record) []byte {
	n := len(AppendLocal(nil, r))
	return appendUvarint(dst, uint64(n))
}

func appendUvarint(dst []byte, x uint64) []byte {
	for x >= 0x80 {
		dst = append(dst, byte(x)|0x80)
		x >>= 7
	}
	return append(dst, byte(x))
}

func nextFramed(data []byte) (rec, rest []byte, ok bool) {
	var n uint64
	var shift uint
	for i, b := range data {
		if i == 9 {
			return nil, nil, false
		}
		n |= uint64(b&0x7f) << shift
		if b < 0x80 {
			data = data[i+1:]
			if n > uint64(len(data)) {
				return nil, nil, false
			}
			return data[:n], data[n:], true
		}
		shift += 7
	}
	return nil, nil, false
}
