package conformance

import (
	"fmt"
	"slices"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// The Nexmark guests of the auction queries (guests/go/nx-win, nx-q4,
// nx-q6, nx-q20), Go-only. nexmark/nxbench checks them against nexmark's
// reference queries; these cases pin one exact behaviour of each.
func init() {
	references["nx-win"] = []refCase{{"closes-auctions", expectNexmarkWin}}
	references["nx-q4"] = []refCase{{"averages-per-category", expectNexmarkQ4}}
	references["nx-q6"] = []refCase{{"averages-in-closing-order", expectNexmarkQ6}}
	references["nx-q20"] = []refCase{{"joins-category-10", expectNexmarkQ20}}
}

// withTimers gives inst a fresh store and timer service and returns them;
// the returned func takes them away.
func withTimers(inst *runtime.Instance) (mapState, *runtime.MemoryTimers, func()) {
	st, tm := mapState{}, runtime.NewMemoryTimers()
	inst.SetState(st)
	inst.SetTimers(tm)
	return st, tm, func() { inst.SetState(nil); inst.SetTimers(nil) }
}

func expectNexmarkWin(s *suite, inst *runtime.Instance) (string, error) {
	st, tm, done := withTimers(inst)
	defer done()
	recs := values(
		`{"auction":7,"bidder":1,"price":60,"dateTime":110,"extra":"held"}`,
		`{"id":7,"itemName":"i","description":"d","initialBid":1,"reserve":2,"dateTime":100,"expires":200,"seller":3,"category":10,"extra":"e"}`,
		`{"auction":7,"bidder":2,"price":50,"dateTime":120,"extra":"lower"}`,
		`{"auction":7,"bidder":3,"price":99,"dateTime":201,"extra":"late"}`,
		`{"id":1,"name":"a person"}`,
	)
	got, err := processOutcome(s, inst, recs, len(recs))
	if err != nil {
		return "", err
	}
	if err := sameOutcome("records", "got", got, "want", outcome{"", "", "", "", "error 2"}); err != nil {
		return "", errorf("the function emits nothing for records and refuses a person: %v", err)
	}
	if l := timerList(tm); !slices.Equal(l, []string{"7@201/event"}) {
		return "", errorf("timers: got %v, want [7@201/event] (the held bid's timer replaced by the auction's)", l)
	}
	fired, err := timerOutcome(s, inst, []abi.Timer{{Key: []byte("7"), Time: 201}}, 1)
	if err != nil {
		return "", err
	}
	want := `k="7" v="{\"id\":7,\"itemName\":\"i\",\"description\":\"d\",\"initialBid\":1,\"reserve\":2,\"dateTime\":100,\"expires\":200,\"seller\":3,\"category\":10,\"extra\":\"e\",\"auction\":7,\"bidder\":1,\"price\":60,\"bid_dateTime\":110,\"bid_extra\":\"held\"}" t=200;`
	if err := sameOutcome("the auction's timer", "got", fired, "want", outcome{want}); err != nil {
		return "", err
	}
	if l := timerList(tm); !slices.Contains(l, "7@10200/event") {
		return "", errorf("timers after the close: got %v, want 7@10200/event among them (the closed mark's)", l)
	}
	if len(st) != 1 || string(st["7"]) != "\x01\x04\x00\x00\x00\x00" {
		return "", errorf("state after the auction closed: %q, want the closed mark", st)
	}
	fired, err = timerOutcome(s, inst, []abi.Timer{{Key: []byte("7"), Time: 10200}}, 1)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("the closed mark's timer", "got", fired, "want", outcome{""}); err != nil {
		return "", err
	}
	if len(st) != 0 {
		return "", errorf("state after the closed mark's timer: %q, want none", st)
	}
	return "holds a bid until its auction, closes the auction at expires+1 with its best bid in time, forgets it 10 s later", nil
}

func expectNexmarkQ4(s *suite, inst *runtime.Instance) (string, error) {
	for _, size := range []int{3, 1} {
		_, _, done := withTimers(inst)
		got, err := processOutcome(s, inst, values(`{"category":10,"price":7}`, `{"category":10,"price":8}`, `{"category":10}`), size)
		done()
		if err != nil {
			return "", err
		}
		want := outcome{`k="10" v="{\"category\":10,\"final\":7}" t=0;`, `k="10" v="{\"category\":10,\"final\":7}" t=0;`, "error 2"}
		if err := sameOutcome(fmt.Sprintf("batches of %d", size), "got", got, "want", want); err != nil {
			return "", err
		}
	}
	return "a running average per category, truncated", nil
}

func expectNexmarkQ6(s *suite, inst *runtime.Instance) (string, error) {
	_, tm, done := withTimers(inst)
	defer done()
	row := func(id, price, expires int) abi.Record {
		return abi.Record{Value: fmt.Appendf(nil, `{"id":%d,"seller":5,"price":%d,"expires":%d}`, id, price, expires)}
	}
	got, err := processOutcome(s, inst, []abi.Record{row(2, 20, 110), row(1, 15, 110), row(3, 30, 100)}, 3)
	if err != nil {
		return "", err
	}
	if err := sameOutcome("records", "got", got, "want", outcome{"", "", ""}); err != nil {
		return "", err
	}
	if l := timerList(tm); !slices.Equal(l, []string{"5@101/event", "5@111/event"}) {
		return "", errorf("timers: got %v, want [5@101/event 5@111/event]", l)
	}
	fired, err := timerOutcome(s, inst, []abi.Timer{{Key: []byte("5"), Time: 101}, {Key: []byte("5"), Time: 111}}, 2)
	if err != nil {
		return "", err
	}
	want := outcome{`k="5" v="{\"seller\":5,\"auction\":3,\"avg_price\":30}" t=100;`,
		`k="5" v="{\"seller\":5,\"auction\":1,\"avg_price\":23}" t=110;k="5" v="{\"seller\":5,\"auction\":2,\"avg_price\":22}" t=110;`}
	if err := sameOutcome("timers", "got", fired, "want", want); err != nil {
		return "", err
	}
	return "holds the closes until their timer, averages them in closing order, halves up", nil
}

func expectNexmarkQ20(s *suite, inst *runtime.Instance) (string, error) {
	bid := []byte(`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"u","dateTime":4,"extra":"x"}`)
	auction := func(category int) []byte {
		return fmt.Appendf(nil, `{"id":1,"itemName":"i","description":"d","initialBid":5,"reserve":6,"dateTime":0,"expires":9,"seller":7,"category":%d,"extra":"y"}`, category)
	}
	res, err := inst.Join(s.ctx, [][]byte{[]byte("1"), []byte("1")}, [][]byte{bid, bid}, [][]byte{auction(10), auction(11)}, nil)
	if err != nil {
		return "", err
	}
	want := `{"auction":1,"bidder":2,"price":3,"channel":"c","url":"u","bid_dateTime":4,"bid_extra":"x","itemName":"i","description":"d","initialBid":5,"reserve":6,"auction_dateTime":0,"expires":9,"seller":7,"category":10,"auction_extra":"y"}`
	if r := res[0]; r.Err != nil || string(r.Bytes) != want || res[1].Err != nil || res[1].Bytes != nil {
		return "", errorf("joins: got %q (error %v) and %q (error %v), want %s and nothing", r.Bytes, r.Err, res[1].Bytes, res[1].Err, want)
	}
	return "a bid joins its auction of category 10 into q20's row, not one of category 11", nil
}
