package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// What the members of a pipeline's group tell each other through the
// consumer protocol: each member's join metadata carries a memberData (in
// ConsumerMemberMetadata.UserData), and the leader's assignment to each
// member carries its standbyAssignment (in ConsumerMemberAssignment.UserData).
// Both are read from other nodes, of this version or another one, so the
// decoders bound every length before they allocate and are fuzzed
// (memberdata_fuzz_test.go).
//
// # Member data
//
// Nodes before standby replicas put their admin URL, raw, in UserData
// (version 1). Since then UserData starts with a 0 byte, which no URL does,
// then a version byte:
//
//	0x00 0x02 uvarint(len(url)) url flags uvarint(n) n × (uvarint(number) uvarint(position))
//
// flags bit 0 says the member takes standby assignments (it reads
// standbyAssignment). The numbers are strictly increasing. Bytes after the
// last copy are ignored, so that a later version may add fields at the end
// without a new version byte. A later version byte (3 and up) must keep the
// admin URL right after the version byte: a node reads the URL of a member
// of a later version, and nothing else of it.
//
// # Standby assignment
//
//	0x00 0x01 uvarint(n) n × (uvarint(number) flags)
//
// flags bit 0 says the number is a warm-up; other bits are ignored. The
// numbers are strictly increasing. An empty UserData is no standbys (the
// leader is a node before standby replicas); a later version byte too.

const (
	memberDataV2 = 2
	assignDataV1 = 1

	// maxAdminURLLen bounds the admin URL in member data.
	maxAdminURLLen = 4096
	// maxCopies bounds the numbers a member reports copies of, and the
	// standby numbers of an assignment.
	maxCopies = 1 << 16

	memberTakesStandbys = 1 << 0
	standbyWarmup       = 1 << 0
)

// errMemberData is wrapped by the errors of decodeMemberData and
// decodeStandbyAssignment.
var errMemberData = errors.New("malformed group member data")

// memberData is what a member of the group tells the others when it joins.
type memberData struct {
	// Version is 1 for a node before standby replicas (a raw admin URL),
	// 2 for this one, higher for a later one (of which only AdminURL is
	// read).
	Version byte
	// AdminURL is where the member's admin API answers (queryable state);
	// empty when it has none.
	AdminURL string
	// TakesStandbys says the member follows the standby numbers its
	// assignment carries; the leader gives standbys and warm-ups only to
	// such members.
	TakesStandbys bool
	// Copies maps each partition number of which the member holds a local
	// copy of the state to that copy's position: the sum over the number's
	// changelog partitions of the offsets the copy has applied. Positions
	// of one number are comparable across members.
	Copies map[int32]int64
}

// appendMemberData appends d encoded as version 2 (d.Version is not
// read). Copies with a negative number are left out, negative positions
// are written as 0, and only the first maxCopies numbers are written. An
// admin URL longer than maxAdminURLLen is written as none: a reader would
// refuse the whole.
func appendMemberData(b []byte, d memberData) []byte {
	b = append(b, 0, memberDataV2)
	url := d.AdminURL
	if len(url) > maxAdminURLLen {
		url = ""
	}
	b = binary.AppendUvarint(b, uint64(len(url)))
	b = append(b, url...)
	var flags byte
	if d.TakesStandbys {
		flags |= memberTakesStandbys
	}
	b = append(b, flags)
	numbers := make([]int32, 0, len(d.Copies))
	for p := range d.Copies {
		if p >= 0 {
			numbers = append(numbers, p)
		}
	}
	slices.Sort(numbers)
	if len(numbers) > maxCopies {
		numbers = numbers[:maxCopies]
	}
	b = binary.AppendUvarint(b, uint64(len(numbers)))
	for _, p := range numbers {
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendUvarint(b, uint64(max(d.Copies[p], 0)))
	}
	return b
}

// decodeMemberData reads the UserData of a member's join metadata: a raw
// admin URL (version 1, no copies) or the encoding above.
func decodeMemberData(b []byte) (memberData, error) {
	if len(b) == 0 || b[0] != 0 {
		return memberData{Version: 1, AdminURL: string(b)}, nil
	}
	if len(b) < 2 {
		return memberData{}, fmt.Errorf("%w: no version", errMemberData)
	}
	d := memberData{Version: b[1]}
	if d.Version < memberDataV2 {
		return memberData{}, fmt.Errorf("%w: version %d", errMemberData, d.Version)
	}
	r := mdReader{b: b[2:]}
	n := r.uvarint()
	if r.err == nil && (n > maxAdminURLLen || n > uint64(len(r.b))) {
		return memberData{}, fmt.Errorf("%w: admin URL of %d bytes", errMemberData, n)
	}
	d.AdminURL = string(r.bytes(int(n)))
	if err := r.errf("admin URL"); err != nil {
		return memberData{}, err
	}
	if d.Version > memberDataV2 {
		return d, nil
	}
	flags := r.byte()
	d.TakesStandbys = flags&memberTakesStandbys != 0
	n = r.uvarint()
	// Each copy takes at least two bytes.
	if r.err == nil && (n > maxCopies || n > uint64(len(r.b))/2) {
		return memberData{}, fmt.Errorf("%w: %d copies in %d bytes", errMemberData, n, len(r.b))
	}
	if n > 0 {
		d.Copies = make(map[int32]int64, n)
	}
	last := int64(-1)
	for range n {
		p, pos := r.uvarint(), r.uvarint()
		if r.err != nil {
			break
		}
		if p > math.MaxInt32 || int64(p) <= last || pos > math.MaxInt64 {
			return memberData{}, fmt.Errorf("%w: copy of number %d at %d after number %d", errMemberData, p, pos, last)
		}
		last = int64(p)
		d.Copies[int32(p)] = int64(pos)
	}
	if err := r.errf("copies"); err != nil {
		return memberData{}, err
	}
	return d, nil
}

// standbyAssignment is what the leader assigns a member beyond its
// partitions: the numbers of which it keeps a copy of the state without
// processing them.
type standbyAssignment struct {
	// Standbys are the numbers the member keeps a standby copy of,
	// ascending; they include the warm-ups.
	Standbys []int32
	// Warmups are the standbys that the member is to take over once its
	// copy has caught up with the owner's (KIP-441), ascending.
	Warmups []int32
}

func (a standbyAssignment) empty() bool { return len(a.Standbys) == 0 }

// appendStandbyAssignment appends a encoded. a.Standbys must be strictly
// increasing, and a.Warmups a subset of them.
func appendStandbyAssignment(b []byte, a standbyAssignment) []byte {
	b = append(b, 0, assignDataV1)
	b = binary.AppendUvarint(b, uint64(len(a.Standbys)))
	for _, p := range a.Standbys {
		b = binary.AppendUvarint(b, uint64(p))
		var flags byte
		if _, ok := slices.BinarySearch(a.Warmups, p); ok {
			flags |= standbyWarmup
		}
		b = append(b, flags)
	}
	return b
}

// decodeStandbyAssignment reads the UserData of a member's assignment.
func decodeStandbyAssignment(b []byte) (standbyAssignment, error) {
	var a standbyAssignment
	if len(b) == 0 {
		return a, nil
	}
	if len(b) < 2 || b[0] != 0 {
		return a, fmt.Errorf("%w: standby assignment without a version", errMemberData)
	}
	switch v := b[1]; {
	case v > assignDataV1:
		return a, nil // a later leader's: nothing this node understands
	case v < assignDataV1:
		return a, fmt.Errorf("%w: standby assignment version %d", errMemberData, v)
	}
	r := mdReader{b: b[2:]}
	n := r.uvarint()
	// Each standby takes at least two bytes.
	if r.err == nil && (n > maxCopies || n > uint64(len(r.b))/2) {
		return a, fmt.Errorf("%w: %d standbys in %d bytes", errMemberData, n, len(r.b))
	}
	if n > 0 {
		a.Standbys = make([]int32, 0, n)
	}
	last := int64(-1)
	for range n {
		p := r.uvarint()
		flags := r.byte()
		if r.err != nil {
			break
		}
		if p > math.MaxInt32 || int64(p) <= last {
			return standbyAssignment{}, fmt.Errorf("%w: standby number %d after %d", errMemberData, p, last)
		}
		last = int64(p)
		a.Standbys = append(a.Standbys, int32(p))
		if flags&standbyWarmup != 0 {
			a.Warmups = append(a.Warmups, int32(p))
		}
	}
	if err := r.errf("standbys"); err != nil {
		return standbyAssignment{}, err
	}
	return a, nil
}

// mdReader reads uvarints and bytes, remembering the first short read.
type mdReader struct {
	b   []byte
	err error
}

func (r *mdReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *mdReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errors.New("short")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *mdReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errors.New("short")
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *mdReader) errf(what string) error {
	if r.err == nil {
		return nil
	}
	return fmt.Errorf("%w: %s: %v", errMemberData, what, r.err)
}
