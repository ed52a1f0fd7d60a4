package abi

import (
	"fmt"
	"slices"

	"github.com/eddy-streams/eddy/abi/msgpack"
)

// Manifest is what eddy_manifest returns (ABI.md, section 4).
type Manifest struct {
	ABI     int
	Kinds   []Kind
	Name    string
	Version string
	SDK     string
}

// Has reports whether the manifest names kind k.
func (m *Manifest) Has(k Kind) bool { return slices.Contains(m.Kinds, k) }

// AppendManifest appends m as a msgpack map, through the hand-written
// appenders: writing cannot fail (msgpack/v5's Encoder returns an error for
// every value, which an append to a slice never has), and it is 4x faster
// (BENCHMARKS.md); manifests are written by SDK tests and tools.
func AppendManifest(b []byte, m *Manifest) []byte {
	n := 2
	for _, s := range []string{m.Name, m.Version, m.SDK} {
		if s != "" {
			n++
		}
	}
	b = msgpack.AppendMapHeader(b, n)
	b = msgpack.AppendStr(b, "abi")
	b = msgpack.AppendInt(b, int64(m.ABI))
	b = msgpack.AppendStr(b, "kinds")
	b = msgpack.AppendArrayHeader(b, len(m.Kinds))
	for _, k := range m.Kinds {
		b = msgpack.AppendStr(b, string(k))
	}
	for _, kv := range [][2]string{{"name", m.Name}, {"version", m.Version}, {"sdk", m.SDK}} {
		if kv[1] != "" {
			b = msgpack.AppendStr(b, kv[0])
			b = msgpack.AppendStr(b, kv[1])
		}
	}
	return b
}

// DecodeManifest decodes and validates a manifest: abi must be Version and
// kinds a non-empty list of known kinds without repeats. Unknown keys are
// skipped. It reads through msgpack/v5 (see msgpackv5.go): the host reads
// one manifest per module load, where the quarter of a microsecond v5
// costs more than the hand-written codec (BENCHMARKS.md) does not matter;
// the manifest comes from the guest, and v5Reader keeps the bounds
// msgpack.Reader has.
func DecodeManifest(b []byte) (Manifest, error) {
	r := getV5Reader(b)
	defer putV5Reader(r)
	var m Manifest
	n, err := r.MapHeader()
	if err != nil {
		return m, malformed("manifest: %v", err)
	}
	seenABI, seenKinds := false, false
	for i := 0; i < n; i++ {
		key, err := r.StrBytes()
		if err != nil {
			return m, malformed("manifest key %d: %v", i, err)
		}
		switch string(key) {
		case "abi":
			v, err := r.Int()
			if err != nil {
				return m, malformed("manifest abi: %v", err)
			}
			m.ABI, seenABI = int(v), true
		case "kinds":
			k, err := r.ArrayHeader()
			if err != nil {
				return m, malformed("manifest kinds: %v", err)
			}
			for j := 0; j < k; j++ {
				s, err := r.Str()
				if err != nil {
					return m, malformed("manifest kinds[%d]: %v", j, err)
				}
				kind := Kind(s)
				if kind.Exports() == nil {
					return m, malformed("manifest kinds[%d]: unknown kind %q (known: %s)", j, s, knownKinds)
				}
				if m.Has(kind) {
					return m, malformed("manifest kinds: %q listed twice", s)
				}
				m.Kinds = append(m.Kinds, kind)
			}
			seenKinds = true
		case "name", "version", "sdk":
			s, err := r.StrBytes()
			if err != nil {
				return m, malformed("manifest %s: %v", key, err)
			}
			if len(s) > MaxManifestString {
				// They travel in registry events, logs and metrics.
				return m, malformed("manifest %s of %d bytes: at most %d", key, len(s), MaxManifestString)
			}
			switch string(key) {
			case "name":
				m.Name = string(s)
			case "version":
				m.Version = string(s)
			default:
				m.SDK = string(s)
			}
		default:
			if err := r.Skip(); err != nil {
				return m, malformed("manifest %q: %v", key, err)
			}
		}
	}
	if r.Len() != 0 {
		return m, malformed("manifest: %d trailing bytes", r.Len())
	}
	switch {
	case !seenABI:
		return m, malformed("manifest has no \"abi\" key")
	case m.ABI != Version:
		return m, fmt.Errorf("manifest says abi %d; this host supports %d", m.ABI, Version)
	case !seenKinds || len(m.Kinds) == 0:
		return m, malformed("manifest names no kinds")
	}
	return m, nil
}
