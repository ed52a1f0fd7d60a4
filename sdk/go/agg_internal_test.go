package eddy

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/eddy-streams/eddy/sdk/go/internal/msgpack"
)

// decodeGroupsGeneral decodes an eddy_agg_add envelope with the general
// reader only, as the reference for the fast paths of readGroups.
func decodeGroupsGeneral(in []byte) (keys, accs [][]byte, recs [][]Record, err error) {
	var g2 guest
	r := &g2.r
	r.Reset(in)
	n := r.ArrayLen()
	for i := 0; i < n && r.Err() == nil; i++ {
		if r.ArrayLen() != 3 {
			r.Fail(errItemShape)
		}
		keys = append(keys, r.Bytes())
		accs = append(accs, r.Bytes())
		rs := make([]Record, r.ArrayLen())
		for j := 0; j < len(rs) && r.Err() == nil; j++ {
			g2.readRecord(&rs[j])
		}
		recs = append(recs, rs)
	}
	if r.Err() != nil {
		return nil, nil, nil, r.Err()
	}
	return keys, accs, recs, g2.trailing()
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// randomGroups encodes an eddy_agg_add envelope of n groups in many shapes:
// the host's (which take the fast path) and other forms the ABI allows
// (str, bin 16, non-shortest array headers, records of every shape).
func randomGroups(rng *rand.Rand, n int) []byte {
	bytesOf := func() []byte {
		switch rng.IntN(6) {
		case 0:
			return nil
		case 1:
			return []byte{}
		case 2:
			return bytes.Repeat([]byte{'x'}, 256+rng.IntN(300)) // bin 16
		}
		v := make([]byte, rng.IntN(40))
		for i := range v {
			v[i] = byte(rng.IntN(256))
		}
		return v
	}
	appendBytes := func(b, v []byte) []byte {
		if v != nil && rng.IntN(6) == 0 {
			return msgpack.AppendStr(b, string(v))
		}
		return msgpack.AppendBin(b, v)
	}
	b := msgpack.AppendArrayHeader(nil, n)
	for range n {
		b = append(b, 0x93)
		b = appendBytes(b, bytesOf())
		b = appendBytes(b, bytesOf())
		k := rng.IntN(20)
		if rng.IntN(4) == 0 {
			k = 0
		}
		recs := randomBatch(rng, k)
		_, h := headerLen(recs)
		switch rng.IntN(4) {
		case 0:
			b = append(b, msgpack.Array16, byte(k>>8), byte(k))
		case 1:
			b = append(b, msgpack.Array32, 0, 0, byte(k>>8), byte(k))
		default:
			b = msgpack.AppendArrayHeader(b, k)
		}
		b = append(b, recs[h:]...)
	}
	return b
}

// headerLen returns the count and the length of the array header at the
// start of b.
func headerLen(b []byte) (n, h int) {
	var r msgpack.Reader
	r.Reset(b)
	n = r.ArrayLen()
	return n, r.Offset()
}

func checkGroups(t *testing.T, g2 *guest, in []byte) {
	t.Helper()
	keys, accs, recs, err := decodeGroupsGeneral(in)
	if err != nil {
		t.Fatalf("general decoder: %v", err)
	}
	if len(g2.groups) != len(keys) {
		t.Fatalf("%d groups, the general decoder %d", len(g2.groups), len(keys))
	}
	for i, gr := range g2.groups {
		if !sameBytes(gr.key, keys[i]) || !sameBytes(gr.acc, accs[i]) || !sameRecords(g2.recs[gr.lo:gr.hi], recs[i]) {
			t.Fatalf("group %d decoded differently from the general decoder", i)
		}
	}
}

// TestReadGroupsFastPath checks that readGroups decodes exactly what the
// general decoder does, on every shape.
func TestReadGroupsFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 100 {
		in := randomGroups(rng, 1+rng.IntN(10))
		var g2 guest
		n, err := g2.count(in)
		if err == nil {
			err = g2.readGroups(in, n)
		}
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		checkGroups(t, &g2, in)
	}
}

// FuzzReadGroups checks that readGroups never panics, and that whatever it
// accepts the general decoder accepts identically.
func FuzzReadGroups(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 10 {
		f.Add(randomGroups(rng, 3))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var g2 guest
		n, err := g2.count(in)
		if n < 0 || g2.readGroups(in, n) != nil {
			return
		}
		if _, _, _, err = decodeGroupsGeneral(in); err != nil {
			t.Fatalf("readGroups accepted what the general decoder refuses: %v", err)
		}
		checkGroups(t, &g2, in)
	})
}

// TestReadGroupsRefusesImpossibleCounts checks that a group announcing more
// records than there are bytes left fails the call without memory being
// set aside for them.
func TestReadGroupsRefusesImpossibleCounts(t *testing.T) {
	for _, in := range [][]byte{
		{0x91, 0x93, msgpack.Nil, msgpack.Nil, msgpack.Array16, 0xff, 0xff, 0x94, msgpack.Nil},
		{0x91, 0x93, msgpack.Bin8, 1, 'k', msgpack.Bin8, 0, msgpack.Array16, 0xff, 0xff, 0x94},
		{0x91, 0x93, msgpack.Nil, msgpack.Nil, 0x9f, 0x94},
	} {
		var g2 guest
		n, err := g2.count(in)
		if err == nil {
			err = g2.readGroups(in, n)
		}
		if err == nil || cap(g2.recs) > 16 {
			t.Errorf("% x: error %v, room for %d records", in, err, cap(g2.recs))
		}
	}
}

// randomItems encodes an envelope of n [key, a, b] (width 3) or [key, acc]
// (width 2) items in many shapes.
func randomItems(rng *rand.Rand, n, width int) []byte {
	b := msgpack.AppendArrayHeader(nil, n)
	for range n {
		b = append(b, 0x90|byte(width))
		for range width {
			switch rng.IntN(6) {
			case 0:
				b = msgpack.AppendNil(b)
			case 1:
				b = msgpack.AppendStr(b, "str")
			case 2:
				b = msgpack.AppendBin(b, bytes.Repeat([]byte{'y'}, 256+rng.IntN(10)))
			default:
				b = msgpack.AppendBin(b, bytes.Repeat([]byte{'z'}, rng.IntN(20)))
			}
		}
	}
	return b
}

// readItemsGeneral decodes items with the general reader only.
func readItemsGeneral(in []byte, width int) ([]item, error) {
	var r msgpack.Reader
	r.Reset(in)
	items := make([]item, r.ArrayLen())
	for i := range items {
		if r.ArrayLen() != width {
			r.Fail(errItemShape)
		}
		items[i].key, items[i].a = r.Bytes(), r.Bytes()
		if width == 3 {
			items[i].b = r.Bytes()
		}
	}
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(errItemShape)
	}
	return items, r.Err()
}

// TestReadItemsFastPath checks that readItems decodes exactly what the
// general reader does, and refuses what it refuses.
func TestReadItemsFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range 400 {
		width := 2 + rng.IntN(2)
		in := randomItems(rng, 1+rng.IntN(10), width)
		if i%4 == 0 { // truncated, or the wrong width
			if rng.IntN(2) == 0 {
				in = in[:rng.IntN(len(in))]
			} else {
				width = 5 - width
			}
		}
		want, werr := readItemsGeneral(in, width)
		var g2 guest
		n, err := g2.readItems(in, width)
		if (err != nil || n < 0) != (werr != nil) {
			t.Fatalf("envelope %d: readItems %d, %v; general reader %v", i, n, err, werr)
		}
		if werr != nil {
			continue
		}
		for j, it := range g2.items {
			w := want[j]
			if !sameBytes(it.key, w.key) || !sameBytes(it.a, w.a) || !sameBytes(it.b, w.b) {
				t.Fatalf("envelope %d item %d: %q %q %q, want %q %q %q", i, j, it.key, it.a, it.b, w.key, w.a, w.b)
			}
		}
	}
}

// hostGroups is an eddy_agg_add envelope as the host writes it for a window
// over many keys: n groups of one record each, with accumulators (nil for
// the first call of a window).
func hostGroups(n int, acc []byte) []byte {
	b := msgpack.AppendArrayHeader(nil, n)
	for i := range n {
		b = append(b, 0x93)
		b = msgpack.AppendBin(b, []byte("user-"+strconv.Itoa(i)))
		b = msgpack.AppendBin(b, acc)
		b = append(b, 0x91, 0x94)
		b = msgpack.AppendBin(b, []byte("user-"+strconv.Itoa(i)))
		b = msgpack.AppendBin(b, []byte(strconv.Itoa(i)))
		b = msgpack.AppendInt(b, 1700000000000+int64(i))
		b = append(b, 0x90)
	}
	return b
}

// TestAggAddPanicsAcrossGroups checks that a panic fails only its record
// when the batch is folded behind one recover: the group goes on from the
// accumulator before the record, and the next group from its own.
func TestAggAddPanicsAcrossGroups(t *testing.T) {
	register(t, func() {
		Aggregate(Aggregator{
			Init: func() []byte { return make([]byte, 8) },
			Add: func(acc []byte, r Record) ([]byte, error) {
				binary.LittleEndian.PutUint64(acc, binary.LittleEndian.Uint64(acc)+1)
				if string(r.Value) == "panic" {
					panic("add panic")
				}
				return acc, nil
			},
		})
	})
	u64 := func(n uint64) []byte { return binary.LittleEndian.AppendUint64(nil, n) }
	group := func(b []byte, acc []byte, values ...string) []byte {
		b = append(b, 0x93, msgpack.Nil)
		b = msgpack.AppendBin(b, acc)
		b = msgpack.AppendArrayHeader(b, len(values))
		for _, v := range values {
			b = append(b, 0x94, msgpack.Nil)
			b = msgpack.AppendBin(b, []byte(v))
			b = append(b, 0x01, 0x90)
		}
		return b
	}
	in := msgpack.AppendArrayHeader(nil, 4)
	in = group(in, nil, "panic", "a", "panic") // first and last records panic
	in = group(in, u64(10), "a", "b")
	in = group(in, nil, "panic")
	in = group(in, u64(5), "a", "panic", "panic", "b")
	out, code := invoke(expAggAdd, in)
	if code != 0 {
		t.Fatalf("code %d", code)
	}
	want := msgpack.AppendArrayHeader(nil, 4)
	added := func(acc []byte, failed ...int) {
		want = append(want, 0x92)
		want = msgpack.AppendBin(want, acc)
		want = msgpack.AppendArrayHeader(want, len(failed))
		for _, i := range failed {
			want = append(want, 0x93, byte(i), byte(codePanic))
			want = msgpack.AppendStr(want, "add panic")
		}
	}
	added(u64(1), 0, 2)
	added(u64(12))
	added(u64(0), 0)
	added(u64(7), 1, 2)
	if !bytes.Equal(out, want) {
		t.Fatalf("answer\n% x\nwant\n% x", out, want)
	}
}

// TestMergeAndResultMayReuseTheirBuffer checks what Aggregator documents:
// the answers of Merge and Result are copied before the next call, so one
// buffer may hold them all.
func TestMergeAndResultMayReuseTheirBuffer(t *testing.T) {
	var buf []byte
	register(t, func() {
		Aggregate(Aggregator{
			Add: func(acc []byte, r Record) ([]byte, error) { return acc, nil },
			Merge: func(_, a, b []byte) ([]byte, error) {
				buf = append(append(buf[:0], a...), b...)
				return buf, nil
			},
			Result: func(key, acc []byte) ([]byte, error) {
				buf = append(append(append(buf[:0], key...), '='), acc...)
				return buf, nil
			},
		})
	})
	in := msgpack.AppendArrayHeader(nil, 3)
	for _, s := range []string{"a", "bb", "ccc"} {
		in = append(in, 0x93, msgpack.Nil)
		in = msgpack.AppendBin(in, []byte(s))
		in = msgpack.AppendBin(in, []byte(s))
	}
	out, code := invoke(expAggMerge, in)
	want := msgpack.AppendArrayHeader(nil, 3)
	for _, s := range []string{"aa", "bbbb", "cccccc"} {
		want = msgpack.AppendBin(append(want, 0x92, 0x00), []byte(s))
	}
	if code != 0 || !bytes.Equal(out, want) {
		t.Fatalf("merge: code %d, answer %q, want %q", code, out, want)
	}

	in = msgpack.AppendArrayHeader(nil, 2)
	for _, s := range []string{"k", "kk"} {
		in = append(in, 0x92)
		in = msgpack.AppendBin(in, []byte(s))
		in = msgpack.AppendBin(in, []byte("v"+s))
	}
	out, code = invoke(expAggResult, in)
	want = msgpack.AppendArrayHeader(nil, 2)
	for _, s := range []string{"k=vk", "kk=vkk"} {
		want = msgpack.AppendBin(append(want, 0x92, 0x00), []byte(s))
	}
	if code != 0 || !bytes.Equal(out, want) {
		t.Fatalf("result: code %d, answer %q, want %q", code, out, want)
	}
	if allocs := testing.AllocsPerRun(20, func() { invoke(expAggResult, in) }); allocs != 0 {
		t.Fatalf("%v allocations per eddy_agg_result call, want 0", allocs)
	}
}

// TestAggAddManyGroupsZeroAllocs is the allocation budget of a window over
// many keys: groups of one record, in the host's shape, with accumulators
// and without (Init).
func TestAggAddManyGroupsZeroAllocs(t *testing.T) {
	register(t, func() {
		Aggregate(Aggregator{
			Init: func() []byte { return make([]byte, 16) },
			Add: func(acc []byte, r Record) ([]byte, error) {
				acc[0]++
				return acc, nil
			},
		})
	})
	for _, acc := range [][]byte{nil, make([]byte, 16)} {
		in := hostGroups(500, acc)
		out, code := invoke(expAggAdd, in)
		if code != 0 || !bytes.Contains(out, []byte{0x92, msgpack.Bin8, 16, 1}) {
			t.Fatalf("code %d, answer % x", code, out[:min(len(out), 40)])
		}
		// Init allocates its answer once per call, not once per group.
		want := 0.0
		if acc == nil {
			want = 1
		}
		if allocs := testing.AllocsPerRun(20, func() { invoke(expAggAdd, in) }); allocs != want {
			t.Fatalf("acc %v: %v allocations per call of 500 groups, want %v", acc, allocs, want)
		}
	}
}
