package abi

import (
	"strconv"
	"unicode/utf8"

	"github.com/eddy-streams/eddy/abi/msgpack"
)

// Limits on what the host decodes from a guest's answer (ABI.md section 5.5).
// A guest's answer is at most its memory, but a few bytes of msgpack can
// stand for a large decoded structure: a 3-byte header becomes a 40-byte
// Header, a 5-byte record an 80-byte Record. These limits bound that
// structure, whatever the guest's memory; an answer over one of them is
// malformed output (ErrMalformed).
const (
	// MaxOutputRecords bounds the records of one eddy_process answer (all
	// input records together): about 84 MB of decoded records.
	MaxOutputRecords = 1_000_000
	// MaxRecordHeaders bounds the headers of one output record.
	MaxRecordHeaders = 1_000
	// MaxOutputHeaders bounds the headers of one eddy_process answer (all
	// records together): about 40 MB of decoded headers.
	MaxOutputHeaders = 1_000_000
	// MaxReasonBytes bounds a failure reason the host keeps (from a Result,
	// a RecordError or the error host function). A longer reason is not an
	// error: it is cut to this many bytes, ending with a marker that says
	// how long it was (TruncateReason).
	MaxReasonBytes = 4 << 10
	// MaxManifestString bounds the name, version and sdk of a manifest, in
	// bytes; a longer one makes the manifest invalid.
	MaxManifestString = 256
)

// Minimum encoded sizes, used to refuse a count before allocating for it: a
// count larger than what is left divided by the smallest element cannot be
// honest.
const (
	minRecordBytes = 5 // [nil, nil, nil, nil]
	minHeaderBytes = 3 // [name, nil] with an empty fixstr name
)

// TruncateReason returns s cut to at most max bytes, on a UTF-8 boundary,
// ending with " …(truncated, N bytes)" when it was cut. It is idempotent: a
// result of at most max bytes is returned unchanged.
func TruncateReason(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return truncated(s, len(s), max)
}

// TruncateBytes is TruncateReason for bytes; it copies only what it keeps.
func TruncateBytes(b []byte, max int) string {
	if len(b) <= max {
		return string(b)
	}
	return truncated(string(b[:max]), len(b), max)
}

// truncated cuts s (a prefix of at least max bytes of a text of n bytes) to
// max bytes with the marker.
func truncated(s string, n, max int) string {
	marker := " …(truncated, " + strconv.Itoa(n) + " bytes)"
	keep := max - len(marker)
	if keep < 0 {
		return marker[:max]
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + marker
}

// readReason reads a str reason, keeping at most MaxReasonBytes of it.
func readReason(r *msgpack.Reader) (string, error) {
	b, err := r.StrBytes()
	if err != nil {
		return "", err
	}
	return TruncateBytes(b, MaxReasonBytes), nil
}
