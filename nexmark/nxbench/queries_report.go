package nxbench

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
)

// reportDaySteps are the steps of q15 and q16 after their key_by: the distinct
// step and the aggregate of fn's module (nx-q15 or nx-q16).
func reportDaySteps(fn func(string) string, name string) string {
	return fmt.Sprintf(`  - {name: distinct, kind: map, function: %[1]s, state: true}
  - name: stats
    kind: aggregate
    function: %[1]s
    window: {type: tumbling, size: 24h}
`, fn(name))
}

// reportDayNote says how q15 and q16 run; q15 and q16's notes start with it.
const reportDayNote = "Flink's unbounded group aggregation (an update per bid) is a key_by on the group, a map step with keyed state " +
	"(the distinct step: per group and day a state entry per bidder and per auction seen, with the price ranks it was seen in; " +
	"each bid becomes a 12-byte delta saying which of the distinct counts it starts, stamped with its dateTime) and an " +
	"aggregate summing the deltas in tumbling windows of a day (emit: final): one row per group and day, with its final " +
	"values, when the day's window closes. Distinct counts cost two or three state reads per bid, not a set rewritten " +
	"in an accumulator. The distinct step keeps the group's newest day and the day before (older days' entries are " +
	"deleted a few per bid): a bid more than a day older than its group's newest goes to the dead-letter topic; a delta " +
	"for a closed day to the late topic"

// reportQueries are q15–q19: per-day statistics, last bid, top 10.
var reportQueries = map[string]Query{
	"q15": {Name: "q15", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: all, kind: key_by, function: %s}\n", fn("nx-one")) + reportDaySteps(fn, "nx-q15")
		},
		Check: checkQ15,
		Note:  reportDayNote + ". q15's one group is the key all (nx-one)."},
	"q16": {Name: "q16", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: by-channel, kind: key_by, function: %s}\n", fn("nx-q16")) + reportDaySteps(fn, "nx-q16")
		},
		Check: checkQ16,
		Note:  reportDayNote + ". q16's groups are the channels (nx-q16's key function: the channel, unescaped, as a key_by on the field would give it without decoding the whole bid)."},
	"q17": {Name: "q17", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - name: stats
    kind: aggregate
    function: %s
    window: {type: tumbling, size: 24h}
`, fn("nx-q17"))
		},
		Check: checkQ17,
		Note: "Flink's unbounded group aggregation (an update per bid) is an aggregate in tumbling windows of a day (emit: final) " +
			"on the bids as they are keyed, by auction (no repartition): one row per auction and day, with its final values, " +
			"when the day's window closes. The window is the record timestamp's day, the row's the dateTime's; a bid on " +
			"which they differ is refused (dead letter)"},
	"q18": {Name: "q18", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: last, kind: flat_map, function: %s, state: true}\n", fn("nx-q18"))
		},
		Check: checkQ18,
		Note: "a flat_map with keyed state on the bids as they are keyed, by auction (a finer key than Flink's partition by " +
			"bidder and auction: no repartition): per bidder and auction the dateTime of the last bid passed on; a bid at " +
			"least as late passes (of two at one time the later in the input, as Flink's deduplication). The output is an " +
			"upsert stream keyed auction/bidder (Flink's is a retract stream); the check takes each key's last record"},
	"q19": {Name: "q19", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: top, kind: flat_map, function: %s, state: true}\n", fn("nx-q19"))
		},
		Check: checkQ19,
		Note: "a flat_map with keyed state on the bids as they are keyed, by auction (no repartition), holding each auction's " +
			"top 10; a bid that enters emits the rows of the ranks it changed (its own and each below, moved down), the bid " +
			"with rank_number, keyed auction/rank: an upsert stream (Flink's is a retract stream); the check takes each " +
			"key's last row. Ties, which Flink leaves to arrival, are ordered by dateTime, then bidder, then input order"},
}

// reportRow is a row of q15 or q16 as the guests write it.
type reportRow struct {
	Channel, Day, Minute string
	TotalBids            int64 `json:"total_bids"`
	Rank1Bids            int64 `json:"rank1_bids"`
	Rank2Bids            int64 `json:"rank2_bids"`
	Rank3Bids            int64 `json:"rank3_bids"`
	TotalBidders         int64 `json:"total_bidders"`
	Rank1Bidders         int64 `json:"rank1_bidders"`
	Rank2Bidders         int64 `json:"rank2_bidders"`
	Rank3Bidders         int64 `json:"rank3_bidders"`
	TotalAuctions        int64 `json:"total_auctions"`
	Rank1Auctions        int64 `json:"rank1_auctions"`
	Rank2Auctions        int64 `json:"rank2_auctions"`
	Rank3Auctions        int64 `json:"rank3_auctions"`
}

// decodeReportRow decodes a day's row and checks that its window is its day.
func decodeReportRow(r abi.Record) (reportRow, nexmark.RankCounts, error) {
	var row reportRow
	if err := json.Unmarshal(r.Value, &row); err != nil {
		return row, nexmark.RankCounts{}, err
	}
	start, end, err := window(r)
	if err != nil {
		return row, nexmark.RankCounts{}, err
	}
	if end-start != nexmark.DayMs || nexmark.Day(start) != row.Day {
		return row, nexmark.RankCounts{}, fmt.Errorf("row of day %s in the window [%d, %d)", row.Day, start, end)
	}
	return row, nexmark.RankCounts{
		Bids:     [4]int64{row.TotalBids, row.Rank1Bids, row.Rank2Bids, row.Rank3Bids},
		Bidders:  [4]int64{row.TotalBidders, row.Rank1Bidders, row.Rank2Bidders, row.Rank3Bidders},
		Auctions: [4]int64{row.TotalAuctions, row.Rank1Auctions, row.Rank2Auctions, row.Rank3Auctions},
	}, nil
}

func checkQ15(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q15(evs), out, func(r abi.Record) (nexmark.Q15Result, error) {
		row, c, err := decodeReportRow(r)
		if err == nil && (string(r.Key) != "all" || row.Channel != "" || row.Minute != "") {
			err = fmt.Errorf("key %q, channel %q, minute %q: q15 has one group and no minute", r.Key, row.Channel, row.Minute)
		}
		return nexmark.Q15Result{Day: row.Day, RankCounts: c}, err
	}, nexmark.Q15Result.Compare)
}

func checkQ16(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q16(evs), out, func(r abi.Record) (nexmark.Q16Result, error) {
		row, c, err := decodeReportRow(r)
		if err == nil && string(r.Key) != row.Channel {
			err = fmt.Errorf("key %q is not the channel %q", r.Key, row.Channel)
		}
		return nexmark.Q16Result{Channel: row.Channel, Day: row.Day, Minute: row.Minute, RankCounts: c}, err
	}, nexmark.Q16Result.Compare)
}

func checkQ17(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q17(evs), out, func(r abi.Record) (nexmark.Q17Result, error) {
		var row struct {
			Auction   int64
			Day       string
			TotalBids int64 `json:"total_bids"`
			Rank1Bids int64 `json:"rank1_bids"`
			Rank2Bids int64 `json:"rank2_bids"`
			Rank3Bids int64 `json:"rank3_bids"`
			MinPrice  int64 `json:"min_price"`
			MaxPrice  int64 `json:"max_price"`
			AvgPrice  int64 `json:"avg_price"`
			SumPrice  int64 `json:"sum_price"`
		}
		if err := json.Unmarshal(r.Value, &row); err != nil {
			return nexmark.Q17Result{}, err
		}
		res := nexmark.Q17Result{Auction: row.Auction, Day: row.Day, Bids: [4]int64{row.TotalBids, row.Rank1Bids, row.Rank2Bids, row.Rank3Bids},
			MinPrice: row.MinPrice, MaxPrice: row.MaxPrice, AvgPrice: row.AvgPrice, SumPrice: row.SumPrice}
		start, end, err := window(r)
		if err == nil && (end-start != nexmark.DayMs || nexmark.Day(start) != row.Day || string(r.Key) != strconv.FormatInt(row.Auction, 10)) {
			err = fmt.Errorf("row of auction %d, day %s: key %q, window [%d, %d)", row.Auction, row.Day, r.Key, start, end)
		}
		return res, err
	}, nexmark.Q17Result.Compare)
}

// reportLastPerKey returns the last record of each key of an upsert stream, in
// the order of their keys' first records.
func reportLastPerKey(out []abi.Record) []abi.Record {
	at := map[string]int{}
	var last []abi.Record
	for _, r := range out {
		if i, ok := at[string(r.Key)]; ok {
			last[i] = r
			continue
		}
		at[string(r.Key)] = len(last)
		last = append(last, r)
	}
	return last
}

func checkQ18(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q18(evs), reportLastPerKey(out), func(r abi.Record) (nexmark.Bid, error) {
		ev, err := nexmark.Decode(r.Value)
		if err != nil || ev.Bid == nil {
			return nexmark.Bid{}, fmt.Errorf("not a bid: %s", r.Value)
		}
		if want := fmt.Sprintf("%d/%d", ev.Bid.Auction, ev.Bid.Bidder); string(r.Key) != want {
			return nexmark.Bid{}, fmt.Errorf("key %q, want %s", r.Key, want)
		}
		return *ev.Bid, nil
	}, nexmark.Bid.Compare)
}

func checkQ19(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q19(evs), reportLastPerKey(out), func(r abi.Record) (nexmark.Q19Result, error) {
		ev, err := nexmark.Decode(r.Value)
		if err != nil || ev.Bid == nil {
			return nexmark.Q19Result{}, fmt.Errorf("not a bid: %s", r.Value)
		}
		var rank struct {
			Rank int64 `json:"rank_number"`
		}
		if err := json.Unmarshal(r.Value, &rank); err != nil {
			return nexmark.Q19Result{}, err
		}
		if want := fmt.Sprintf("%d/%d", ev.Bid.Auction, rank.Rank); string(r.Key) != want {
			return nexmark.Q19Result{}, fmt.Errorf("key %q, want %s", r.Key, want)
		}
		return nexmark.Q19Result{Bid: *ev.Bid, Rank: rank.Rank}, nil
	}, nexmark.Q19Result.Compare)
}
