package abi

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi/msgpack"
	msgpackv5 "github.com/vmihailenco/msgpack/v5"
)

// The hand-written codec and msgpack/v5 fuzzed against each other on the
// envelopes besides the batch one (FuzzCodecsAgree has that): for each,
// what one writes is byte for byte what the other writes and reads back
// the same, and on any bytes the two decoders give the same values or
// the same error.

// agree fails t unless the two decoders' answers are the same: equal
// values (nil and empty byte strings apart) and no error, or the same
// error message.
func agree(t *testing.T, what string, hand any, handErr error, v5 any, v5Err error) {
	t.Helper()
	switch {
	case (handErr == nil) != (v5Err == nil):
		t.Fatalf("%s: hand-written: %v, msgpack/v5: %v", what, handErr, v5Err)
	case handErr != nil && handErr.Error() != v5Err.Error():
		t.Fatalf("%s: errors differ:\nhand-written: %v\nmsgpack/v5:   %v", what, handErr, v5Err)
	case handErr == nil && !reflect.DeepEqual(hand, v5):
		t.Fatalf("%s: hand-written read %+v, msgpack/v5 %+v", what, hand, v5)
	}
}

// sameBytes fails t unless the two encoders wrote the same bytes.
func sameBytes(t *testing.T, what string, hand, v5 []byte) {
	t.Helper()
	if !bytes.Equal(hand, v5) {
		t.Fatalf("%s: hand-written wrote\n% x\nmsgpack/v5 wrote\n% x", what, hand, v5)
	}
}

// FuzzManifestCodecsAgree: AppendManifest and DecodeManifest (msgpack/v5)
// against the hand-written codec they replaced. Both decoders read the
// fuzzer's bytes the same; a manifest built from its values is written the
// same by both encoders and read back the same by both decoders.
func FuzzManifestCodecsAgree(f *testing.F) {
	f.Add(AppendManifest(nil, &remindManifest), int64(1), uint8(3), "remind", "1.0.0", "go/0.1.0")
	f.Add([]byte("\x83\xa3abi\x01\xa5kinds\x91\xa4join\xa5extra\x81\x01\x92\xc0\xc3"), int64(2), uint8(0), "", "", "")
	f.Add([]byte("\x82\xa3abi\xcf\xff\xff\xff\xff\xff\xff\xff\xff\xa5kinds\x91\xa7process"), int64(-1), uint8(0xff), strings.Repeat("n", 300), "v", "")
	f.Add([]byte("\x82\xa3abi\x01\xa1x\xdd\x80\x00\x00\x00"), int64(1), uint8(1), "", "", "")
	f.Add([]byte("\x82\xa3abi\x01\xa1x\x91\x91\x91\x91\xca\x00\x00\x00\x00"), int64(1), uint8(1), "", "", "")
	f.Fuzz(func(t *testing.T, data []byte, abiV int64, kinds uint8, name, version, sdk string) {
		mh, eh := decodeManifestHand(data)
		mv, ev := DecodeManifest(data)
		agree(t, "manifest from the fuzzer's bytes", mh, eh, mv, ev)

		m := Manifest{ABI: int(abiV), Name: name, Version: version, SDK: sdk}
		for i, k := range Kinds {
			if kinds&(1<<i) != 0 {
				m.Kinds = append(m.Kinds, k)
			}
		}
		hand, v5 := AppendManifest(nil, &m), appendManifestV5(nil, &m)
		sameBytes(t, "manifest", hand, v5)
		mh, eh = decodeManifestHand(v5)
		mv, ev = DecodeManifest(hand)
		agree(t, "manifest each codec wrote", mh, eh, mv, ev)
		valid := m.ABI == Version && len(m.Kinds) > 0 &&
			len(name) <= MaxManifestString && len(version) <= MaxManifestString && len(sdk) <= MaxManifestString
		if valid != (ev == nil) || (valid && !reflect.DeepEqual(m, mv)) {
			t.Fatalf("%+v reads back as %+v, %v", m, mv, ev)
		}
	})
}

// FuzzTimersCodecsAgree: the timer envelope, which the host writes by hand
// (AppendTimers) and tests read through msgpack/v5 (DecodeTimers).
func FuzzTimersCodecsAgree(f *testing.F) {
	f.Add(AppendTimers(nil, benchTimers(3)), []byte("k"), int64(5), uint8(3))
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, []byte{}, int64(-1<<63), uint8(1))
	f.Add([]byte{0x91, 0x93, 0xc4, 0x00, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x00}, []byte(nil), int64(1<<62), uint8(2))
	f.Add([]byte{0x91, 0x93, 0xc0, 0x01, 0xc0}, bytes.Repeat([]byte{0xff}, 300), int64(0), uint8(7))
	f.Fuzz(func(t *testing.T, data, key []byte, at int64, n uint8) {
		th, eh := decodeTimersHand(data, nil)
		tv, ev := DecodeTimers(data, nil)
		agree(t, "timers from the fuzzer's bytes", th, eh, tv, ev)

		// Up to seven timers; nil, empty and long keys, both domains.
		var ts []Timer
		for i := range int(n % 8) {
			tm := Timer{Key: key[:min(len(key), i*40)], Time: at + int64(i), Domain: TimeDomain(i % 2)}
			if i%3 == 2 {
				tm.Key = nil
			}
			ts = append(ts, tm)
		}
		hand, v5 := AppendTimers(nil, ts), appendTimersV5(nil, ts)
		sameBytes(t, "timers", hand, v5)
		th, eh = decodeTimersHand(v5, nil)
		tv, ev = DecodeTimers(hand, nil)
		agree(t, "timers each codec wrote", th, eh, tv, ev)
		if ev != nil || len(tv) != len(ts) {
			t.Fatalf("%+v reads back as %+v, %v", ts, tv, ev)
		}
		for i := range ts {
			if !bytes.Equal(ts[i].Key, tv[i].Key) || (ts[i].Key == nil) != (tv[i].Key == nil) || ts[i].Time != tv[i].Time || ts[i].Domain != tv[i].Domain {
				t.Fatalf("timer %d: %+v reads back as %+v", i, ts[i], tv[i])
			}
		}
	})
}

// aggGroups are the groups the fuzzed aggregate answers are read for.
var aggGroups = []Group{{Key: []byte("a"), Records: make([]Record, 2)}, {Key: []byte("b"), Records: make([]Record, 1)}}

// FuzzAggregateCodecsAgree: the aggregate envelopes, which stay
// hand-written, beside msgpack/v5 versions of them. The two decoders read
// the fuzzer's bytes the same as an eddy_agg_add answer, as [Result × 2]
// of each body type, and as eddy_agg_init's Result. Groups, triples and
// pairs built from the fuzzer's values are written the same by both
// encoders, and so are answers (written with each codec's primitives),
// which both decoders read back the same, as what was written.
func FuzzAggregateCodecsAgree(f *testing.F) {
	f.Add([]byte{0x92, 0x92, 0xc4, 0x01, 0x00, 0x91, 0x93, 0x01, 0x01, 0xa1, 'x', 0x92, 0xa0, 0x90}, uint8(0), []byte("acc"), "no", uint8(3))
	f.Add([]byte{0x92, 0x92, 0x00, 0xd3, 0, 0, 0, 0, 0, 0, 0, 1, 0x92, 0x00, 0x05}, uint8(2), []byte{}, "", uint8(0))
	f.Add([]byte{0x92, 0x92, 0x00, 0xc0, 0x92, 0x00, 0xc0}, uint8(1), []byte(nil), strings.Repeat("r", MaxReasonBytes+1), uint8(0xff))
	f.Add([]byte{0x92, 0x00, 0xc4, 0x02, 'o', 'k'}, uint8(1), bytes.Repeat([]byte{0}, 70000), "é", uint8(1))
	f.Add([]byte{0x92, 0x92, 0x01, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x92, 0x00, 0xc0}, uint8(0), []byte("a"), "", uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, bt uint8, acc []byte, reason string, shape uint8) {
		typ := BodyType(bt % 3)
		ah, eh := DecodeAggAddOutput(data, aggGroups, nil)
		av, ev := decodeAggAddOutputV5(data, aggGroups, nil)
		agree(t, "add answer from the fuzzer's bytes", ah, eh, av, ev)
		vh, eh := DecodeValues(data, 2, typ, nil)
		vv, ev := decodeValuesV5(data, 2, typ, nil)
		agree(t, "results from the fuzzer's bytes", vh, eh, vv, ev)
		oh, eh := DecodeValue(data, typ)
		ov, ev := decodeValueV5(data, typ)
		agree(t, "init result from the fuzzer's bytes", oh, eh, ov, ev)

		// Inputs: groups cut from data, with and without accumulators.
		var groups []Group
		for i, part := range bytes.SplitN(data, []byte{0}, 4) {
			g := Group{Key: part[:len(part)/2], Acc: acc}
			if i%2 == 1 {
				g.Acc = nil
			}
			for j := range int(shape % 3) {
				g.Records = append(g.Records, Record{Key: part, Value: part[len(part)/2:], Timestamp: int64(j) - 1,
					Headers: []Header{{Key: reason, Value: acc}}})
			}
			groups = append(groups, g)
		}
		sameBytes(t, "add input", AppendAggAddInput(nil, groups), appendAggAddInputV5(nil, groups))
		triple := func(i int) ([]byte, []byte, []byte) { return groups[i].Key, groups[i].Acc, acc }
		sameBytes(t, "triples", AppendTriples(nil, len(groups), triple), appendTriplesV5(nil, len(groups), triple))
		pair := func(i int) ([]byte, []byte) { return groups[i].Key, groups[i].Acc }
		sameBytes(t, "pairs", AppendPairs(nil, len(groups), pair), appendPairsV5(nil, len(groups), pair))

		// Answers: an accumulator per group of aggGroups, the first with an
		// error for its last record when shape says so; Results of the
		// body type, the first failed when shape says so.
		added := []Added{{Acc: acc}, {Acc: append(acc[:len(acc):len(acc)], 'x')}}
		if acc == nil {
			added[0].Acc = []byte{}
		}
		if shape&1 != 0 {
			added[0].Errors = []ItemError{{Index: 1, Code: Code(shape>>1) + 1, Reason: reason}}
		}
		hand, v5 := appendAddedHand(nil, added), appendAddedV5(nil, added)
		sameBytes(t, "add answer", hand, v5)
		ah, eh = DecodeAggAddOutput(v5, aggGroups, nil)
		av, ev = decodeAggAddOutputV5(hand, aggGroups, nil)
		agree(t, "add answer each codec wrote", ah, eh, av, ev)
		if ev != nil || len(av) != 2 || !bytes.Equal(av[0].Acc, added[0].Acc) || !bytes.Equal(av[1].Acc, added[1].Acc) ||
			len(av[0].Errors) != len(added[0].Errors) || (len(av[0].Errors) == 1 && av[0].Errors[0].Reason != TruncateReason(reason, MaxReasonBytes)) {
			t.Fatalf("add answer %+v reads back as %+v, %v", added, av, ev)
		}

		vals := []Value{{Bytes: acc, Int: at(acc)}, {Bytes: []byte{}, Int: -at(acc)}}
		if typ == BodyNonNil && acc == nil {
			vals[0].Bytes = []byte{}
		}
		if shape&2 != 0 {
			vals[0] = Value{Code: CodeRejected, Reason: reason}
		}
		hand, v5 = appendValuesHand(nil, vals, typ), appendValuesV5(nil, vals, typ)
		sameBytes(t, "results", hand, v5)
		vh, eh = DecodeValues(v5, 2, typ, nil)
		vv, ev = decodeValuesV5(hand, 2, typ, nil)
		agree(t, "results each codec wrote", vh, eh, vv, ev)
		if ev != nil {
			t.Fatalf("results %+v do not read back: %v", vals, ev)
		}
		for i := range vals {
			w, g := vals[i], vv[i]
			if w.Code != g.Code || TruncateReason(w.Reason, MaxReasonBytes) != g.Reason ||
				(w.Code == CodeOK && typ == BodyInt && w.Int != g.Int) ||
				(w.Code == CodeOK && typ != BodyInt && (!bytes.Equal(w.Bytes, g.Bytes) || (w.Bytes == nil) != (g.Bytes == nil))) {
				t.Fatalf("result %d: %+v reads back as %+v", i, w, g)
			}
		}
	})
}

// at is an int the fuzzer's bytes stand for, as a timestamp body.
func at(b []byte) int64 {
	var v int64
	for _, c := range b[:min(len(b), 8)] {
		v = v<<8 | int64(c)
	}
	return v
}

// appendAddedHand writes an eddy_agg_add answer with the hand-written
// primitives: [[acc, [[index, code, reason] × E]] × G].
func appendAddedHand(b []byte, added []Added) []byte {
	b = msgpack.AppendArrayHeader(b, len(added))
	for _, a := range added {
		b = msgpack.AppendBin(append(b, 0x92), a.Acc)
		b = msgpack.AppendArrayHeader(b, len(a.Errors))
		for _, e := range a.Errors {
			b = msgpack.AppendInt(append(b, 0x93), int64(e.Index))
			b = msgpack.AppendInt(b, int64(e.Code))
			b = msgpack.AppendStr(b, e.Reason)
		}
	}
	return b
}

// appendAddedV5 is appendAddedHand through msgpack/v5.
func appendAddedV5(b []byte, added []Added) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		err := enc.EncodeArrayLen(len(added))
		for _, a := range added {
			err = errors.Join(err, enc.EncodeArrayLen(2), enc.EncodeBytes(a.Acc), enc.EncodeArrayLen(len(a.Errors)))
			for _, e := range a.Errors {
				err = errors.Join(err, enc.EncodeArrayLen(3), enc.EncodeInt(int64(e.Index)), enc.EncodeInt(int64(e.Code)), enc.EncodeString(e.Reason))
			}
		}
		return err
	})
}

// appendValuesHand writes [Result × N] with bodies of type t with the
// hand-written primitives.
func appendValuesHand(b []byte, vals []Value, t BodyType) []byte {
	b = msgpack.AppendArrayHeader(b, len(vals))
	for _, v := range vals {
		switch {
		case v.Code != CodeOK:
			b = AppendResultError(b, v.Code, v.Reason)
		case t == BodyInt:
			b = msgpack.AppendInt(append(b, 0x92, 0x00), v.Int)
		default:
			b = msgpack.AppendBin(append(b, 0x92, 0x00), v.Bytes)
		}
	}
	return b
}

// appendValuesV5 is appendValuesHand through msgpack/v5.
func appendValuesV5(b []byte, vals []Value, t BodyType) []byte {
	return appendV5(b, func(enc *msgpackv5.Encoder) error {
		err := enc.EncodeArrayLen(len(vals))
		for _, v := range vals {
			err = errors.Join(err, enc.EncodeArrayLen(2), enc.EncodeInt(int64(v.Code)))
			switch {
			case v.Code != CodeOK:
				err = errors.Join(err, enc.EncodeString(v.Reason))
			case t == BodyInt:
				err = errors.Join(err, enc.EncodeInt(v.Int))
			default:
				err = errors.Join(err, enc.EncodeBytes(v.Bytes))
			}
		}
		return err
	})
}
