package nxbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/nexmark"
)

// TopicSide is q13's side input topic, which its global table reads.
const TopicSide = "side"

// statelessQueries are q10, q13, q14, q21 and q22: maps, filters and a side-input join.
var statelessQueries = map[string]Query{
	"q10": {Name: "q10", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: log, kind: map, function: %s}\n", fn("nx-q10"))
		},
		Check: checkQ10,
		Note: "Flink writes the rows to CSV files partitioned by dt and hm; Eddy has no file sink, so the rows go to the sink topic " +
			"as JSON, keyed by auction as the bids are, each with its dt and hm (the partition a file sink would write it to)"},
	"q13": {Name: "q13", Sources: []string{TopicBids}, Tables: "  - {name: side, topic: side, global: true}\n",
		Side: sideInput,
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf(`  - {name: by-side-key, kind: key_by, function: %[1]s}
  - {name: enrich, kind: join, table: side, function: %[1]s}
`, fn("nx-q13"))
		},
		Check: checkQ13,
		Note: "the side input (10,000 rows {\"key\":i,\"value\":\"i\"}, keyed i) is a global table read from the topic side, " +
			"written before any event; the bids are keyed by auction % 10000 and inner-joined with it. A global table is joined " +
			"as it is when the bid is processed, as Flink's FOR SYSTEM_TIME AS OF PROCTIME() is; the output key is the join key"},
	"q14": {Name: "q14", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: calc, kind: filter, function: %s}\n", fn("nx-q14"))
		},
		Check: checkQ14,
		Note: "one filter step that also projects (at most one output per bid); price is Flink's exact DECIMAL(23,3) 0.908*price, " +
			"a JSON number with three decimals. The default generator's events start at 2015-07-15 00:00 UTC, 10,000 a second, so every " +
			"bid here is nightTime (the reference's and the guest's tests cover the other hours)"},
	"q21": {Name: "q21", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: channel-id, kind: filter, function: %s}\n", fn("nx-q21"))
		},
		Check: checkQ21,
		Note:  "one filter step that also projects (at most one output per bid)"},
	"q22": {Name: "q22", Sources: []string{TopicBids},
		Steps: func(fn func(string) string) string {
			return fmt.Sprintf("  - {name: dirs, kind: map, function: %s}\n", fn("nx-q22"))
		},
		Check: checkQ22},
}

// sideInput returns q13's side input records: key i, value
// {"key":i,"value":"i"} (nexmark.SideInput).
func sideInput() map[string][]abi.Record {
	rows := nexmark.SideInput()
	recs := make([]abi.Record, len(rows))
	for i, r := range rows {
		k := strconv.FormatInt(r.Key, 10)
		v, _ := json.Marshal(struct {
			Key   int64  `json:"key"`
			Value string `json:"value"`
		}{r.Key, r.Value})
		recs[i] = abi.Record{Key: []byte(k), Value: v, Timestamp: nexmark.BaseTime}
	}
	return map[string][]abi.Record{TopicSide: recs}
}

// strict decodes one JSON object into v, refusing members v does not
// have and anything after the object; numbers stay json.Number in
// interfaces.
func strict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("data after the object")
	}
	return nil
}

// members checks that the object data has exactly the named members, so
// that a missing one is not read as its zero value or null.
func members(data []byte, names ...string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return fmt.Errorf("no %q member", n)
		}
	}
	if len(m) != len(names) {
		return fmt.Errorf("%d members, want %d (%v)", len(m), len(names), names)
	}
	return nil
}

// sameKey checks an output's key: the bid's auction, which keys the
// input.
func sameKey(r abi.Record, auction int64) error {
	if string(r.Key) != strconv.FormatInt(auction, 10) {
		return fmt.Errorf("key %q, want the auction %d", r.Key, auction)
	}
	return nil
}

func checkQ10(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q10(evs), out, func(r abi.Record) (res nexmark.Q10Result, err error) {
		if err := members(r.Value, "auction", "bidder", "price", "dateTime", "extra", "dt", "hm"); err != nil {
			return res, err
		}
		if err := strict(r.Value, &res); err != nil {
			return res, err
		}
		if r.Timestamp != res.DateTime {
			return res, fmt.Errorf("timestamp %d, want the bid's %d", r.Timestamp, res.DateTime)
		}
		return res, sameKey(r, res.Auction)
	}, nexmark.Q10Result.Compare)
}

func checkQ13(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q13(evs, nexmark.SideInput()), out, func(r abi.Record) (res nexmark.Q13Result, err error) {
		if err := members(r.Value, "auction", "bidder", "price", "dateTime", "value"); err != nil {
			return res, err
		}
		if err := strict(r.Value, &res); err != nil {
			return res, err
		}
		if r.Timestamp != res.DateTime {
			return res, fmt.Errorf("timestamp %d, want the bid's %d", r.Timestamp, res.DateTime)
		}
		if k := strconv.FormatInt(res.Auction%nexmark.SideInputRows, 10); string(r.Key) != k {
			return res, fmt.Errorf("key %q, want the join key %s", r.Key, k)
		}
		return res, nil
	}, nexmark.Q13Result.Compare)
}

// thousandths reads a DECIMAL of scale 3 as q14 writes it, digits, a point
// and three decimals, exactly.
func thousandths(n json.Number) (int64, error) {
	s := string(n)
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 3 {
		return 0, fmt.Errorf("price %s: not a number with three decimals", s)
	}
	if strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("price %s: not a number with three decimals", s)
	}
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("price %s: %w", s, err)
	}
	return v, nil
}

func checkQ14(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q14(evs), out, func(r abi.Record) (res nexmark.Q14Result, err error) {
		var v struct {
			nexmark.Q14Result
			Price json.Number
		}
		if err := members(r.Value, "auction", "bidder", "price", "bidTimeType", "dateTime", "extra", "c_counts"); err != nil {
			return res, err
		}
		if err := strict(r.Value, &v); err != nil {
			return res, err
		}
		res = v.Q14Result
		if res.Price, err = thousandths(v.Price); err != nil {
			return res, err
		}
		if r.Timestamp != res.DateTime {
			return res, fmt.Errorf("timestamp %d, want the bid's %d", r.Timestamp, res.DateTime)
		}
		return res, sameKey(r, res.Auction)
	}, nexmark.Q14Result.Compare)
}

func checkQ21(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q21(evs), out, func(r abi.Record) (res nexmark.Q21Result, err error) {
		if err := members(r.Value, "auction", "bidder", "price", "channel", "channel_id"); err != nil {
			return res, err
		}
		if err := strict(r.Value, &res); err != nil {
			return res, err
		}
		return res, sameKey(r, res.Auction)
	}, nexmark.Q21Result.Compare)
}

func checkQ22(evs []nexmark.Event, out []abi.Record) error {
	return compare(nexmark.Q22(evs), out, func(r abi.Record) (res nexmark.Q22Result, err error) {
		var v struct {
			Auction, Bidder, Price int64
			Channel                string
			Dir1, Dir2, Dir3       *string
		}
		if err := members(r.Value, "auction", "bidder", "price", "channel", "dir1", "dir2", "dir3"); err != nil {
			return res, err
		}
		if err := strict(r.Value, &v); err != nil {
			return res, err
		}
		null := func(s *string) nexmark.NullString {
			if s == nil {
				return nexmark.NullString{}
			}
			return nexmark.NullString{S: *s, Valid: true}
		}
		res = nexmark.Q22Result{Auction: v.Auction, Bidder: v.Bidder, Price: v.Price, Channel: v.Channel,
			Dir1: null(v.Dir1), Dir2: null(v.Dir2), Dir3: null(v.Dir3)}
		return res, sameKey(r, res.Auction)
	}, nexmark.Q22Result.Compare)
}
