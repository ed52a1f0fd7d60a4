package conformance

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// The Nexmark guests of the report queries (guests/go/nx-q15 to nx-q19,
// the first two on guests/go/nx-daystats), Go-only. nexmark/nxbench checks
// them against nexmark's reference queries; these cases pin one exact
// behaviour of each.
func init() {
	references["nx-q15"] = []refCase{
		{"distinct-deltas", expectNexmarkQ15Distinct},
		{"sums-deltas-of-a-day", expectNexmarkQ15Stats},
	}
	references["nx-q16"] = []refCase{
		{"channel-key", expectNexmarkQ16Key},
		{"distinct-deltas-per-channel", expectNexmarkQ16Distinct},
		{"sums-deltas-of-a-channel", expectNexmarkQ16Stats},
	}
	references["nx-q17"] = []refCase{{"auction-day-stats", expectNexmarkQ17}}
	references["nx-q18"] = []refCase{{"last-bid-per-bidder", expectNexmarkQ18}}
	references["nx-q19"] = []refCase{{"top-ten-per-auction", expectNexmarkQ19}}
}

// reportDay is 2015-07-15T00:00:00Z (nexmark's base time), in ms; a day of
// it, 16631 days since the epoch, keys the day-statistics state.
const (
	reportDay   = int64(1436918400000)
	reportDayMs = int64(86_400_000)
)

// reportBid is a Nexmark bid of channel Apple under key, with the record
// timestamp 0 (the distinct step stamps its delta with the dateTime).
func reportBid(key string, auction, bidder, price, t int64) abi.Record {
	return abi.Record{Key: []byte(key), Value: fmt.Appendf(nil,
		`{"auction":%d,"bidder":%d,"price":%d,"channel":"Apple","url":"u","dateTime":%d,"extra":"x"}`, auction, bidder, price, t)}
}

// dayDelta is a delta of nx-daystats' distinct step: version 1, the bid's
// price rank, which counts it is the first of for its bidder and for its
// auction (bit 0 all, bit r its rank), and its dateTime, little-endian.
func dayDelta(rank, bidder, auction byte, t int64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{1, rank, bidder, auction}, uint64(t))
}

// deltaOut describes the distinct step's output for a bid of group key.
func deltaOut(key string, rank, bidder, auction byte, t int64) string {
	return fmt.Sprintf("k=%s v=%s t=%d;", q([]byte(key)), q(dayDelta(rank, bidder, auction, t)), t)
}

// dayHeader is a group's header in nx-daystats' state: version 1, then
// newest day, entries of it and of the day before, the retired day and its
// list indexes still to delete, little-endian.
func dayHeader(newest, n0, n1, retired, next, end int64) string {
	b := []byte{1}
	for _, x := range []int64{newest, n0, n1, retired, next, end} {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return string(b)
}

// dayEntry is the state key of a bidder (tag 'b') or auction ('a') seen on
// day by group key.
func dayEntry(day int64, tag byte, id int64, key string) string {
	b := binary.BigEndian.AppendUint64([]byte{'e'}, uint64(day))
	b = binary.BigEndian.AppendUint64(append(b, tag), uint64(id))
	return string(b) + key
}

func expectNexmarkQ15Distinct(s *suite, inst *runtime.Instance) (string, error) {
	d1 := reportDay / reportDayMs
	recs := []abi.Record{
		reportBid("all", 10, 1, 5, reportDay),           // all new, rank 1
		reportBid("all", 10, 1, 9_999, reportDay+1),     // nothing new
		reportBid("all", 11, 1, 10_000, reportDay+2),    // the bidder new in rank 2, a new auction
		reportBid("all", 10, 2, 1_000_000, reportDay+3), // a new bidder, the auction new in rank 3
		{Key: []byte("all"), Value: []byte(`{"id":1,"name":"n"}`)},
		reportBid("all", 10, 1, 5, 253402300800000),         // the year 10000
		reportBid("all", 10, 1, 5, reportDay+2*reportDayMs), // two days on: day 1 retires, all new
		reportBid("all", 10, 1, 5, reportDay+4),             // day 1 now: more than a day late
	}
	want := outcome{
		deltaOut("all", 1, 1|2, 1|2, reportDay),
		deltaOut("all", 1, 0, 0, reportDay+1),
		deltaOut("all", 2, 4, 1|4, reportDay+2),
		deltaOut("all", 3, 1|8, 8, reportDay+3),
		"error 2", "error 2",
		deltaOut("all", 1, 1|2, 1|2, reportDay+2*reportDayMs),
		"error 1",
	}
	for _, size := range []int{len(recs), 1} {
		st, _, done := withTimers(inst)
		got, err := processOutcome(s, inst, recs[:4], size)
		if err != nil {
			done()
			return "", err
		}
		// After day 1's bids: the header, and an entry and a list entry
		// per bidder and auction (bidder 1 seen in ranks 1 and 2).
		if len(st) != 9 || string(st["gall"]) != dayHeader(d1, 4, 0, 0, 0, 0) || string(st[dayEntry(d1, 'b', 1, "all")]) != "\x06" ||
			string(st[dayEntry(d1, 'a', 10, "all")]) != "\x0a" {
			done()
			return "", errorf("state after day 1's bids (batches of %d): %q, want 9 entries: the header of day 16631 with 4 entries, bidder 1 in ranks 1 and 2, auction 10 in ranks 1 and 3", size, st)
		}
		rest, err := processOutcome(s, inst, recs[4:], size)
		if err != nil {
			done()
			return "", err
		}
		got = append(got, rest...)
		if err := sameOutcome(fmt.Sprintf("batches of %d", size), "got", got, "want", want); err != nil {
			done()
			return "", err
		}
		// Two days on, day 1's 4 entries are deleted by the bid itself
		// (up to 8 per bid), its own 2 entries made.
		if len(st) != 5 || string(st["gall"]) != dayHeader(d1+2, 2, 0, d1, 4, 4) || string(st[dayEntry(d1+2, 'b', 1, "all")]) != "\x02" {
			done()
			return "", errorf("state after day 3's bid (batches of %d): %q, want 5 entries: the header of day 16633 with 2 entries (day 16631 retired and deleted), bidder 1 in rank 1", size, st)
		}
		done()
	}
	return "a bid in, its 12-byte delta out, stamped with its dateTime; distinct bidders and auctions per day and rank in state; a day two days on retires day 1, a bid of it is refused", nil
}

// dayDeltas are deltas of a day: 4 bids, 2 bidders, 2 auctions.
func dayDeltas(ts [4]int64) []abi.Record {
	return []abi.Record{
		{Value: dayDelta(1, 1|2, 1|2, ts[0])},
		{Value: dayDelta(1, 0, 0, ts[1])},
		{Value: dayDelta(2, 4, 1|4, ts[2])},
		{Value: dayDelta(3, 1|8, 8, ts[3])},
	}
}

const dayCounts = `\"total_bids\":4,\"rank1_bids\":2,\"rank2_bids\":1,\"rank3_bids\":1,` +
	`\"total_bidders\":2,\"rank1_bidders\":1,\"rank2_bidders\":1,\"rank3_bidders\":1,` +
	`\"total_auctions\":2,\"rank1_auctions\":1,\"rank2_auctions\":1,\"rank3_auctions\":1}"`

// expectDayStats folds deltas (and two that are not deltas) under key, in
// one batch and as a merge of two parts, and checks the result is want;
// an accumulator without bids gives nothing.
func expectDayStats(s *suite, inst *runtime.Instance, key []byte, deltas []abi.Record, want string) error {
	if init, err := inst.AggInit(s.ctx); err != nil {
		return err
	} else if r, err := s.result(inst, key, init); err != nil || r != "nil" {
		return errorf("no bids: got %s (error %v), want nothing", r, err)
	}
	recs := append(slices.Clone(deltas), abi.Record{Value: []byte(`{"auction":1,"bidder":2,"price":3,"dateTime":4}`)},
		abi.Record{Value: dayDelta(1, 4, 0, reportDay)}) // a bid, not its delta; rank 1 with bit 2 set
	acc, failed, err := fold(s, inst, key, nil, recs, 2)
	if err != nil {
		return err
	}
	if !slices.Equal(failed, []int{4, 5}) {
		return errorf("failed records: got %v, want [4 5] (not deltas)", failed)
	}
	if r, err := s.result(inst, key, acc); err != nil || r != want {
		return errorf("result: got %s (error %v), want %s", r, err, want)
	}
	a, _, err := fold(s, inst, key, nil, deltas[:1], 1)
	if err != nil {
		return err
	}
	b, _, err := fold(s, inst, key, nil, deltas[1:], 3)
	if err != nil {
		return err
	}
	merged, err := inst.AggMerge(s.ctx, [][]byte{key}, [][]byte{a}, [][]byte{b}, nil)
	if err != nil {
		return err
	}
	if merged[0].Err != nil {
		return errorf("merge: %v", merged[0].Err)
	}
	if r, err := s.result(inst, key, merged[0].Bytes); err != nil || r != want {
		return errorf("merged result: got %s (error %v), want %s", r, err, want)
	}
	return nil
}

func expectNexmarkQ15Stats(s *suite, inst *runtime.Instance) (string, error) {
	deltas := dayDeltas([4]int64{reportDay, reportDay + 1, reportDay + 2, reportDay + 3})
	if err := expectDayStats(s, inst, []byte("all"), deltas, `"{\"day\":\"2015-07-15\",`+dayCounts); err != nil {
		return "", err
	}
	return "the day's bids, distinct bidders and distinct auctions, in all and per rank, from the deltas; merged alike; non-deltas refused", nil
}

func expectNexmarkQ16Key(s *suite, inst *runtime.Instance) (string, error) {
	keys, err := inst.Key(s.ctx, values(
		`{"auction":1,"bidder":2,"price":3,"channel":"Goo\"gle \u00e9","url":"u","dateTime":4,"extra":"x"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"Apple","dateTime":4}`,
		`{"auction":1,"bidder":2,"price":3,"channel":5,"dateTime":4}`,
		`{"id":1,"name":"n"}`, `not json`,
	), nil)
	if err != nil {
		return "", err
	}
	if string(keys[0].Bytes) != "Goo\"gle é" || keys[0].Err != nil || string(keys[1].Bytes) != "Apple" || keys[1].Err != nil {
		return "", errorf("keys: got %q (error %v), %q (error %v), want %q and Apple", keys[0].Bytes, keys[0].Err, keys[1].Bytes, keys[1].Err, "Goo\"gle é")
	}
	for i, k := range keys[2:] {
		if k.Err == nil || k.Err.Code != abi.CodeBadInput {
			return "", errorf("record %d: got key %q (error %v), want BAD_INPUT (code 2)", i+2, k.Bytes, k.Err)
		}
	}
	return "a bid's channel, unescaped, as its key; a channel that is not a string, a person and non-JSON refused with BAD_INPUT", nil
}

func expectNexmarkQ16Distinct(s *suite, inst *runtime.Instance) (string, error) {
	t := reportDay + 13*3_600_000 + 5*60_000
	recs := []abi.Record{
		reportBid("Apple", 10, 1, 5, t),
		reportBid(`Goo"gle`, 10, 1, 5, t+1), // another group: all new again
		reportBid("Apple", 10, 1, 20_000, t+2),
		reportBid("Apple", 10, 1, 7, t+3),
		{Key: []byte("Apple"), Value: []byte(`{"id":10,"itemName":"i","seller":1}`)},
	}
	want := outcome{
		deltaOut("Apple", 1, 1|2, 1|2, t),
		deltaOut(`Goo"gle`, 1, 1|2, 1|2, t+1),
		deltaOut("Apple", 2, 4, 4, t+2),
		deltaOut("Apple", 1, 0, 0, t+3),
		"error 2",
	}
	d1 := reportDay / reportDayMs
	for _, size := range []int{len(recs), 1} {
		st, _, done := withTimers(inst)
		got, err := processOutcome(s, inst, recs, size)
		if err != nil {
			done()
			return "", err
		}
		if err := sameOutcome(fmt.Sprintf("batches of %d", size), "got", got, "want", want); err != nil {
			done()
			return "", err
		}
		if len(st) != 10 || string(st["gApple"]) != dayHeader(d1, 2, 0, 0, 0, 0) || string(st[`gGoo"gle`]) != dayHeader(d1, 2, 0, 0, 0, 0) ||
			string(st[dayEntry(d1, 'a', 10, "Apple")]) != "\x06" || string(st[dayEntry(d1, 'a', 10, `Goo"gle`)]) != "\x02" {
			done()
			return "", errorf("state (batches of %d): %q, want 10 entries: per channel a header of 2 entries; auction 10 in ranks 1 and 2 for Apple, rank 1 for Goo\"gle", size, st)
		}
		done()
	}
	return "deltas per channel (the record key): each channel counts its own distinct bidders and auctions; an auction refused", nil
}

func expectNexmarkQ16Stats(s *suite, inst *runtime.Instance) (string, error) {
	// The minute is that of the last dateTime, not of the last delta.
	deltas := dayDeltas([4]int64{reportDay + 13*3_600_000 + 5*60_000, reportDay + reportDayMs - 1, reportDay + 3_600_000, reportDay})
	want := `"{\"channel\":\"Goo\\\"gle\",\"day\":\"2015-07-15\",\"minute\":\"23:59\",` + dayCounts
	if err := expectDayStats(s, inst, []byte(`Goo"gle`), deltas, want); err != nil {
		return "", err
	}
	return "q15's counts with the channel (the key, escaped) and the minute of the day's last bid; merged alike; non-deltas refused", nil
}

func expectNexmarkQ17(s *suite, inst *runtime.Instance) (string, error) {
	b := func(auction, price, t int64) string {
		return fmt.Sprintf(`{"auction":%d,"bidder":1,"price":%d,"dateTime":%d}`, auction, price, t)
	}
	key := []byte("7")
	if init, err := inst.AggInit(s.ctx); err != nil {
		return "", err
	} else if r, err := s.result(inst, key, init); err != nil || r != "nil" {
		return "", errorf("no bids: got %s (error %v), want nothing", r, err)
	}
	acc, failed, err := fold(s, inst, key, nil, values(
		b(7, 5, reportDay+1), b(7, 20_000, reportDay+2), `{"id":1,"name":"n"}`, b(7, 2_000_000, reportDay+3),
		b(7, 6, reportDay+reportDayMs), b(8, 6, reportDay+4), b(7, 6, 253402300800000), b(7, 6, reportDay+5),
	), 3)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{2, 4, 5, 6}) {
		return "", errorf("failed records: got %v, want [2 4 5 6] (a person, another day, another auction, the year 10000)", failed)
	}
	want := `"{\"auction\":7,\"day\":\"2015-07-15\",\"total_bids\":4,\"rank1_bids\":2,\"rank2_bids\":1,\"rank3_bids\":1,` +
		`\"min_price\":5,\"max_price\":2000000,\"avg_price\":505002,\"sum_price\":2020011}"`
	if r, err := s.result(inst, key, acc); err != nil || r != want {
		return "", errorf("result: got %s (error %v), want %s", r, err, want)
	}
	// The average truncates towards zero: -5/2 is -2.
	neg, _, err := fold(s, inst, key, nil, values(b(7, -7, reportDay+6), b(7, 2, reportDay+7)), 2)
	if err != nil {
		return "", err
	}
	merged, err := inst.AggMerge(s.ctx, [][]byte{key}, [][]byte{neg}, [][]byte{acc}, nil)
	if err != nil {
		return "", err
	}
	if merged[0].Err != nil {
		return "", errorf("merge: %v", merged[0].Err)
	}
	want = `"{\"auction\":7,\"day\":\"2015-07-15\",\"total_bids\":6,\"rank1_bids\":4,\"rank2_bids\":1,\"rank3_bids\":1,` +
		`\"min_price\":-7,\"max_price\":2000000,\"avg_price\":336667,\"sum_price\":2020006}"`
	if r, err := s.result(inst, key, merged[0].Bytes); err != nil || r != want {
		return "", errorf("merged result: got %s (error %v), want %s", r, err, want)
	}
	if r, err := s.result(inst, key, neg); err != nil || r != `"{\"auction\":7,\"day\":\"2015-07-15\",\"total_bids\":2,\"rank1_bids\":2,\"rank2_bids\":0,\"rank3_bids\":0,\"min_price\":-7,\"max_price\":2,\"avg_price\":-2,\"sum_price\":-5}"` {
		return "", errorf("result of prices -7 and 2: got %s (error %v), want avg_price -2", r, err)
	}
	other, _, err := fold(s, inst, key, nil, values(b(7, 1, reportDay+reportDayMs)), 1)
	if err != nil {
		return "", err
	}
	merged, err = inst.AggMerge(s.ctx, [][]byte{key}, [][]byte{acc}, [][]byte{other}, nil)
	if err != nil {
		return "", err
	}
	if merged[0].Err == nil || merged[0].Err.Code != abi.CodeBadInput {
		return "", errorf("merge of two days: got %q (error %v), want BAD_INPUT (code 2)", merged[0].Bytes, merged[0].Err)
	}
	return "an auction's bids of a day: counts per rank, least, greatest, average (truncated) and total price; other days, auctions and non-bids refused", nil
}

func expectNexmarkQ18(s *suite, inst *runtime.Instance) (string, error) {
	bid := func(key string, auction, bidder, price, t int64) abi.Record {
		r := reportBid(key, auction, bidder, price, t)
		r.Timestamp = t
		return r
	}
	recs := []abi.Record{
		bid("1", 1, 7, 100, 50),
		bid("1", 1, 7, 300, 40), // earlier than the last passed on: dropped
		bid("1", 1, 8, 10, 10),
		bid("1", 1, 8, 20, 10), // the same time: the later in the input is the last
		bid("2", 2, 7, 5, 60),  // another auction
		bid("01", 1, 7, 400, 70),
		{Key: []byte("1"), Value: []byte(`{"id":1,"name":"n"}`)},
		{Key: []byte("1"), Value: []byte(`{"auction":1.5,"bidder":1,"dateTime":1}`)},
	}
	pass := func(k string, r abi.Record) string { return fmt.Sprintf("k=%q v=%s t=%d;", k, q(r.Value), r.Timestamp) }
	want := outcome{pass("1/7", recs[0]), "", pass("1/8", recs[2]), pass("1/8", recs[3]), pass("2/7", recs[4]), "error 1", "error 2", "error 2"}
	for _, size := range []int{len(recs), 1} {
		st, _, done := withTimers(inst)
		got, err := processOutcome(s, inst, recs, size)
		if err != nil {
			done()
			return "", err
		}
		if err := sameOutcome(fmt.Sprintf("batches of %d", size), "got", got, "want", want); err != nil {
			done()
			return "", err
		}
		key := func(bidder int64, k string) string {
			return string(binary.BigEndian.AppendUint64(nil, uint64(bidder))) + k
		}
		le := func(t int64) string { return string(binary.LittleEndian.AppendUint64(nil, uint64(t))) }
		if len(st) != 3 || string(st[key(7, "1")]) != le(50) || string(st[key(8, "1")]) != le(10) || string(st[key(7, "2")]) != le(60) {
			done()
			return "", errorf("state (batches of %d): %q, want 3 entries: the last dateTime passed on per bidder and auction (50, 10, 60)", size, st)
		}
		done()
	}
	return "passes a bid at least as late as its bidder's last on the auction, keyed auction/bidder; drops earlier ones; a key other than the auction refused", nil
}

func expectNexmarkQ19(s *suite, inst *runtime.Instance) (string, error) {
	bid := func(bidder, price, t int64) string {
		return fmt.Sprintf(`{"auction":7,"bidder":%d,"price":%d,"channel":"c","url":"u","dateTime":%d,"extra":"x"}`, bidder, price, t)
	}
	rec := func(v string) abi.Record { return abi.Record{Key: []byte("7"), Value: []byte(v), Timestamp: 9} }
	// row is the output for the bid v at rank: v with rank_number added.
	row := func(v string, rank int) string {
		return fmt.Sprintf("k=%q v=%s t=9;", fmt.Sprint("7/", rank), q(fmt.Appendf(nil, `%s,"rank_number":%d}`, v[:len(v)-1], rank)))
	}
	b1, b2, b3, b4 := bid(1, 10, 100), bid(2, 20, 101), bid(0, 10, 100), bid(1, 10, 100)
	recs := []abi.Record{rec(b1), rec(b2), rec(b3), rec(b4 + " ")} // b4 equals b1, with white space after it
	want := outcome{
		row(b1, 1),
		row(b2, 1) + row(b1, 2), // a higher price
		row(b3, 2) + row(b1, 3), // the same price and time, a smaller bidder
		row(b4, 4),              // equal to b1: after it
	}
	// Six bids of price 1 fill the top ten (ranks 5 to 10).
	for i := range int64(6) {
		v := bid(1, 1, 200+i)
		recs, want = append(recs, rec(v)), append(want, row(v, 5+int(i)))
	}
	b5, b6 := bid(0, 1, 204), bid(1, 1, 205)
	recs = append(recs, rec(bid(1, 0, 1)), rec(b5), rec(b6), // below the top; at rank 9, pushing out rank 10; equal to the one pushed out
		abi.Record{Key: []byte("8"), Value: []byte(b1)}, rec(`{"id":1,"name":"n"}`), rec(`{"auction":7,"bidder":1,"dateTime":1}`))
	want = append(want, "", row(b5, 9)+row(bid(1, 1, 204), 10), "", "error 1", "error 2", "error 2")
	for _, size := range []int{len(recs), 1} {
		st, _, done := withTimers(inst)
		got, err := processOutcome(s, inst, recs, size)
		if err != nil {
			done()
			return "", err
		}
		if err := sameOutcome(fmt.Sprintf("batches of %d", size), "got", got, "want", want); err != nil {
			done()
			return "", err
		}
		if h := st["h7"]; len(st) != 2 || len(h) != 1+24*10 || h[0] != 10 || binary.LittleEndian.Uint64(h[1:]) != 20 {
			done()
			return "", errorf("state (batches of %d): %q, want a header of 10 ranks (the first of price 20) and a list", size, st)
		}
		done()
	}
	return "an auction's top ten by price, then dateTime, then bidder, then input order: a bid that enters emits the rows of the ranks it changed; a key other than the auction refused", nil
}
