package host

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group member data (memberdata.go) is read from other nodes: its
// decoders never panic, do not allocate from the lengths they read, and
// read back what their encoders wrote. FuzzBalanceMemberData balances
// groups whose members say anything at all.

func FuzzMemberData(f *testing.F) {
	f.Add([]byte("http://10.0.0.7:8080"))
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{0, 1, 3, 'a', 'b', 'c'})
	f.Add(appendMemberData(nil, memberData{AdminURL: "http://a:1", TakesStandbys: true, Copies: map[int32]int64{0: 5, 3: 1 << 40, 7: 0}}))
	f.Add(appendMemberData(nil, memberData{}))
	f.Add([]byte{0, 9, 3, 'u', 'r', 'l', 0xff, 0xff}) // a later version: its URL only
	f.Add([]byte{0, 2, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		var (
			d   memberData
			err error
		)
		if n := allocated(func() { d, err = decodeMemberData(b) }); n > allocSlack+uint64(64*len(b)) {
			t.Fatalf("decodeMemberData of %d bytes allocated %d bytes", len(b), n)
		}
		if err != nil {
			if !errors.Is(err, errMemberData) {
				t.Fatalf("%v does not wrap errMemberData", err)
			}
			return
		}
		if len(d.AdminURL) > len(b) || len(d.Copies) > maxCopies {
			t.Fatalf("%q read as %+v", b, d)
		}
		if d.Version > memberDataV2 {
			return
		}
		if d.Version == 1 && len(d.AdminURL) > maxAdminURLLen {
			return // an old node's URL is what it is; re-encoded it would be dropped
		}
		again, err := decodeMemberData(appendMemberData(nil, d))
		if err != nil {
			t.Fatalf("%+v re-encoded does not read: %v", d, err)
		}
		if again.AdminURL != d.AdminURL || again.TakesStandbys != d.TakesStandbys || !maps.Equal(again.Copies, d.Copies) {
			t.Fatalf("%+v re-encoded reads %+v", d, again)
		}
	})
}

func FuzzStandbyAssignment(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0})
	f.Add(appendStandbyAssignment(nil, standbyAssignment{Standbys: []int32{0, 2, 9}, Warmups: []int32{2}}))
	f.Add(appendStandbyAssignment(nil, standbyAssignment{Standbys: []int32{1 << 30}, Warmups: []int32{1 << 30}}))
	f.Add([]byte{0, 7, 1, 2, 3}) // a later version: no standbys
	f.Add([]byte{0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0})
	f.Add([]byte{0, 1, 2, 5, 0, 5, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var (
			a   standbyAssignment
			err error
		)
		if n := allocated(func() { a, err = decodeStandbyAssignment(b) }); n > allocSlack+uint64(16*len(b)) {
			t.Fatalf("decodeStandbyAssignment of %d bytes allocated %d bytes", len(b), n)
		}
		if err != nil {
			if !errors.Is(err, errMemberData) {
				t.Fatalf("%v does not wrap errMemberData", err)
			}
			return
		}
		if !slices.IsSorted(a.Standbys) || len(a.Standbys) > maxCopies {
			t.Fatalf("%q read as %+v", b, a)
		}
		for _, p := range a.Warmups {
			if _, ok := slices.BinarySearch(a.Standbys, p); !ok {
				t.Fatalf("%q: warm-up %d is not a standby: %+v", b, p, a)
			}
		}
		again, err := decodeStandbyAssignment(appendStandbyAssignment(nil, a))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(a) {
			t.Fatalf("%+v re-encoded reads %+v, %v", a, again, err)
		}
	})
}

// FuzzBalanceMemberData balances two members whose UserData is anything,
// with a third one of this version: no panic, and every number assigned
// (none was owned, so the cooperative adjustment holds none back).
func FuzzBalanceMemberData(f *testing.F) {
	f.Add([]byte("http://a"), appendMemberData(nil, memberData{TakesStandbys: true, Copies: map[int32]int64{1: 9}}), uint8(1))
	f.Add([]byte{0, 2, 0, 1, 2, 0, 5, 3, 7}, []byte{0, 3}, uint8(9))
	f.Fuzz(func(t *testing.T, u1, u2 []byte, standbys uint8) {
		topics := map[string]int32{"in": 6}
		var members []kmsg.JoinGroupResponseMember
		for i, u := range [][]byte{u1, u2, nil} {
			meta := kmsg.NewConsumerMemberMetadata()
			meta.Version = 3
			meta.Topics = []string{"in"}
			meta.UserData = u
			if u == nil {
				meta.UserData = appendMemberData(nil, memberData{TakesStandbys: true})
			}
			m := kmsg.NewJoinGroupResponseMember()
			m.MemberID = fmt.Sprint("m", i)
			m.ProtocolMetadata = meta.AppendTo(nil)
			members = append(members, m)
		}
		c := copartitioned{standbys: int(standbys % 10), warmupLag: 10}
		mb, _, err := c.MemberBalancer(members)
		if err != nil {
			t.Fatal(err)
		}
		into, err := mb.(*kgo.ConsumerBalancer).BalanceOrError(topics)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int32]bool{}
		for _, a := range into.IntoSyncAssignment() {
			parts, err := copartitioned{}.ParseSyncAssignment(a.MemberAssignment)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range parts["in"] {
				seen[p] = true
			}
		}
		if len(seen) != 6 {
			t.Fatalf("%d of 6 numbers assigned", len(seen))
		}
	})
}
