package nxbench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
)

// auctionQueries are q4, q6, q9 and q20: auctions closed by timers, and a stream-stream join.
var auctionQueries = map[string]Query{
	"q9": {Name: "q9", Sources: []string{TopicAuctions, TopicBids},
		Steps: winStep,
		Check: checkQ9,
		Note: "one stateful step with timers over the auctions and the bids (co-partitioned by auction ID): it keeps per auction the auction and its best bid " +
			"(held bids that came before their auction), and a timer at expires+1 emits the row once, when the watermark has passed every bid of the auction's time; " +
			"Flink's ROW_NUMBER emits an update (and retraction) at every new best bid instead. Ties on price and time go to the smaller bidder, then extra"},
	"q4": {Name: "q4", Sources: []string{TopicAuctions, TopicBids},
		Steps: func(fn func(string) string) string {
			return winStep(fn) + fmt.Sprintf(`  - {name: by-category, kind: key_by, field: category}
  - {name: average, kind: map, function: %s, state: true}
`, fn("nx-q4"))
		},
		Check: checkQ4,
		Note: "q9's winning bids, then per category a running count and sum: an update stream, one average per closed auction with a winner " +
			"(as Flink's GROUP BY emits), truncated as Flink's AVG of a BIGINT; the check compares the last one per category"},
	"q6": {Name: "q6", Sources: []string{TopicAuctions, TopicBids},
		Steps: func(fn func(string) string) string {
			return winStep(fn) + fmt.Sprintf(`  - {name: by-seller, kind: key_by, field: seller}
  - {name: average, kind: flat_map, function: %s, state: true}
`, fn("nx-q6"))
		},
		Check: checkQ6,
		Note: "Flink cannot run q6's SQL (FLINK-19059); this is Beam's moving mean over a seller's last 10 closed auctions, emitted at each close, " +
			"with q9's winning bids (SQL's, not Beam's) and the auctions in closing order (Beam keeps the latest by bid time). " +
			"The rows of a seller come from several upstream partitions, so the step holds them until the watermark passes their expires (a timer) " +
			"and takes them in order of expires, then auction ID; the average rounds as Beam's Math.round. " +
			"In process only for now: through Kafka the seller step's watermark never moves, since the rows a timer firing of nx-win's step makes " +
			"count, for the repartition's progress, as coming from the input topic of the batch that fired it, and the auctions' partitions " +
			"(whose batches seldom fire anything) then hold every seller's watermark back"},
	"q20": {Name: "q20", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - name: expand
    kind: join
    stream: auctions
    window: {before: 1s, after: 100ms}
    function: %s
`, fn("nx-q20"))
		},
		Check: checkQ20,
		Note: "a windowed stream-stream join of the bids with the auctions instead of the SQL's unbounded one (Flink keeps both sides forever): " +
			"a bid meets an auction up to 1 s before it and 100 ms after it. The generator's bids name one of the latest 100 auctions " +
			"(at most about 1,720 events, 172 ms at 10,000 events/s, before the bid) or one of the next 10 (about 235 events, 24 ms, after it); " +
			"the join function drops pairs whose category is not 10"},
}

// winStep is nx-win's step: the winning bid of each auction, as q9's rows.
func winStep(fn func(string) string) string {
	return fmt.Sprintf("  - {name: win, kind: flat_map, function: %s, state: true}\n", fn("nx-win"))
}

func checkQ9(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q9(evs), out, func(r abi.Record) (res nexmark.Q9Result, err error) {
		if err := json.Unmarshal(r.Value, &res); err != nil {
			return res, err
		}
		if string(r.Key) != strconv.FormatInt(res.ID, 10) || r.Timestamp != res.Expires {
			return res, fmt.Errorf("key %q, timestamp %d: want the auction's ID and expires", r.Key, r.Timestamp)
		}
		return res, nil
	}, nexmark.Q9Result.Compare)
}

// checkQ4 compares the last average of each category with the reference,
// and the number of updates with the auctions it averages.
func checkQ4(evs []nexmark.Event, out []abi.Record) error {
	last := map[int64]nexmark.CategoryAverage{}
	for _, r := range out {
		var v struct{ Category, Final int64 }
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("output %s: %w", r.Value, err)
		}
		if string(r.Key) != strconv.FormatInt(v.Category, 10) {
			return fmt.Errorf("output %s: key %q", r.Value, r.Key)
		}
		last[v.Category] = nexmark.CategoryAverage{Category: v.Category, Auctions: last[v.Category].Auctions + 1, Final: v.Final}
	}
	var got []abi.Record
	for _, a := range last {
		v, _ := json.Marshal(a)
		got = append(got, abi.Record{Value: v})
	}
	return compare(nexmark.CategoryAverages(evs), got, func(r abi.Record) (a nexmark.CategoryAverage, err error) {
		return a, json.Unmarshal(r.Value, &a)
	}, nexmark.CategoryAverage.Compare)
}

// checkQ6 checks that each seller's averages come in closing order and
// compares them with the reference.
func checkQ6(evs []nexmark.Event, out []abi.Record) error {
	prev := map[int64]nexmark.SellerAverage{}
	return compare(nexmark.SellerAverages(evs), out, func(r abi.Record) (a nexmark.SellerAverage, err error) {
		var raw struct {
			Seller   int64 `json:"seller"`
			Auction  int64 `json:"auction"`
			AvgPrice int64 `json:"avg_price"`
		}
		if err := json.Unmarshal(r.Value, &raw); err != nil {
			return a, err
		}
		if string(r.Key) != strconv.FormatInt(raw.Seller, 10) {
			return a, fmt.Errorf("key %q", r.Key)
		}
		a = nexmark.SellerAverage{Seller: raw.Seller, Expires: r.Timestamp, Auction: raw.Auction, AvgPrice: raw.AvgPrice}
		if p, ok := prev[a.Seller]; ok && cmp.Or(cmp.Compare(p.Expires, a.Expires), cmp.Compare(p.Auction, a.Auction)) >= 0 {
			return a, fmt.Errorf("seller %d: the close of auction %d (at %d) after that of %d (at %d)", a.Seller, a.Auction, a.Expires, p.Auction, p.Expires)
		}
		prev[a.Seller] = a
		return a, nil
	}, nexmark.SellerAverage.Compare)
}

func checkQ20(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q20(evs), out, func(r abi.Record) (res nexmark.Q20Result, err error) {
		if err := json.Unmarshal(r.Value, &res); err != nil {
			return res, err
		}
		if string(r.Key) != strconv.FormatInt(res.Auction, 10) {
			return res, fmt.Errorf("key %q: want the auction's ID", r.Key)
		}
		return res, nil
	}, nexmark.Q20Result.Compare)
}
