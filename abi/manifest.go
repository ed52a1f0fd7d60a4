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

// AppendManifest appends m as a msgpack map.
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
// skipped.
func DecodeManifest(b []byte) (Manifest, error) {
	var m Manifest
	var r msgpack.Reader
	r.Reset(b)
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
					return m, malformed("manifest kinds[%d]: unknown kind %q (known: process, aggregate, join, key, timestamp)", j, s)
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
