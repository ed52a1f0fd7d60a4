package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// The Nexmark guests (guests/<lang>/nx-*): Go-only except nx-q1 and nx-q2,
// which have C twins. guests/nexmark_test.go checks them against nexmark's
// reference queries; these cases pin one exact behaviour of each.
func init() {
	const bid = `{"auction":1107,"bidder":1001,"price":1000,"channel":"Apple","url":"https://www.nexmark.com/","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwg"}`
	references["nx-q1"] = []refCase{{"converts-bid-prices", expectProcess(values(
		bid, `{"bidder":1,"price":-7}`, `{"id":1,"name":"n"}`, `[1]`,
	), []string{
		`k=nil v="{\"auction\":1107,\"bidder\":1001,\"price\":890,\"channel\":\"Apple\",\"url\":\"https://www.nexmark.com/\",\"dateTime\":1436918400000,\"extra\":\"fdiysaV^]NLVsbolvyqwg\"}" t=0;`,
		`k=nil v="{\"bidder\":1,\"price\":-6}" t=0;`, "error 2", "error 2",
	})}}
	references["nx-q2"] = []refCase{{"selects-auctions-by-123", expectProcess(values(
		bid, `{"auction":1108,"bidder":1,"price":5}`, `{"id":123,"name":"n"}`, `{"auction":123,"bidder":1,"price":1.5}`,
	), []string{`k=nil v="{\"auction\":1107,\"price\":1000}" t=0;`, "", "", "error 2"})}}
	references["nx-q3"] = []refCase{{"filters-and-joins", expectNexmarkQ3}}
	references["nx-q7"] = []refCase{{"highest-bids", expectNexmarkQ7}}
	references["nx-q8"] = []refCase{{"new-sellers", expectNexmarkQ8}}
	references["nx-count"] = []refCase{{"counts", expectNexmarkCount}}
	references["nx-q5"] = []refCase{{"tags-counts", expectProcess([]abi.Record{
		{Key: []byte("42"), Value: []byte(`{"count":3}`), Headers: []abi.Header{
			{Key: "eddy.window.start", Value: []byte("1000")}, {Key: "eddy.window.end", Value: []byte("11000")}}},
		{Key: []byte("42"), Value: []byte(`{"count":3}`)},
	}, []string{
		`k="42" v="{\"auction\":42,\"count\":3,\"start\":1000,\"end\":11000}" t=0;`, "error 2",
	})}, {"hot-items", expectNexmarkQ5}}
	references["nx-one"] = []refCase{{"one-key", expectNexmarkOne}}
	// The functions of examples/ (fan-out, alerts, top-auctions).
	references["nx-route"] = []refCase{{"routes-by-kind", expectProcess(values(
		bid, `{"id":7,"name":"Ann","emailAddress":"a@b"}`, `{"id":1000,"itemName":"x","seller":7}`, `{"x":1}`, `[1]`,
	), []string{
		`k=nil v="` + strings.ReplaceAll(bid, `"`, `\"`) + `" t=0;`,
		`k=nil v="{\"id\":7,\"name\":\"Ann\",\"emailAddress\":\"a@b\"}" t=0 h["eddy.output"]="people";`,
		`k=nil v="{\"id\":1000,\"itemName\":\"x\",\"seller\":7}" t=0 h["eddy.output"]="auctions";`,
		"error 2", "error 2",
	})}}
	references["nx-busy"] = []refCase{{"keeps-counts-of-5", expectProcess(values(
		`{"count":5}`, `{"count":4}`, `{"count":12}`, `{"n":9}`, `{"count":"5"}`,
	), []string{`k=nil v="{\"count\":5}" t=0;`, "", `k=nil v="{\"count\":12}" t=0;`, "error 2", "error 2"})}}
	references["nx-top3"] = []refCase{{"top-three", expectNexmarkTop3}}
}

func expectNexmarkTop3(s *suite, inst *runtime.Instance) (string, error) {
	key := []byte("10000")
	tagged := func(auction, count int) string {
		return fmt.Sprintf(`{"auction":%d,"count":%d,"start":0,"end":10000}`, auction, count)
	}
	acc, failed, err := fold(s, inst, key, nil, values(tagged(5, 3), tagged(9, 1), `{"x":1}`, tagged(2, 3), tagged(7, 8)), 2)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{2}) {
		return "", errorf("failed records: got %v, want [2] (not a tagged count)", failed)
	}
	other, _, err := fold(s, inst, key, nil, values(tagged(1, 3), tagged(4, 9)), 2)
	if err != nil {
		return "", err
	}
	want := `"{\"start\":0,\"end\":10000,\"top\":[{\"auction\":7,\"count\":8},{\"auction\":2,\"count\":3},{\"auction\":5,\"count\":3}]}"`
	if r, err := s.result(inst, key, acc); err != nil || r != want {
		return "", errorf("result: got %s (error %v), want %s", r, err, want)
	}
	merged, err := inst.AggMerge(s.ctx, [][]byte{key}, [][]byte{acc}, [][]byte{other}, nil)
	if err != nil {
		return "", err
	}
	if merged[0].Err != nil {
		return "", errorf("merge: %v", merged[0].Err)
	}
	want = `"{\"start\":0,\"end\":10000,\"top\":[{\"auction\":4,\"count\":9},{\"auction\":7,\"count\":8},{\"auction\":1,\"count\":3}]}"`
	if r, err := s.result(inst, key, merged[0].Bytes); err != nil || r != want {
		return "", errorf("merged result: got %s (error %v), want %s", r, err, want)
	}
	return "the three auctions with the most bids, ties to the smaller id, merged", nil
}

func expectNexmarkQ3(s *suite, inst *runtime.Instance) (string, error) {
	if _, err := expectProcess(values(`{"id":5,"seller":1,"category":10}`, `{"id":6,"seller":1,"category":11}`, `{"bidder":1}`),
		[]string{`k=nil v="{\"id\":5,\"seller\":1,\"category\":10}" t=0;`, "", ""})(s, inst); err != nil {
		return "", err
	}
	res, err := inst.Join(s.ctx, [][]byte{[]byte("1"), []byte("1")},
		[][]byte{[]byte(`{"id":5,"seller":1}`), []byte(`{"id":5,"seller":1}`)},
		[][]byte{[]byte(`{"name":"A","city":"B","state":"OR"}`), []byte(`{"name":"A","city":"B","state":"WY"}`)}, nil)
	if err != nil {
		return "", err
	}
	if r := res[0]; r.Err != nil || string(r.Bytes) != `{"name":"A","city":"B","state":"OR","auction":5}` || res[1].Bytes != nil {
		return "", errorf("joins: got %q (error %v) and %q, want {\"name\":\"A\",\"city\":\"B\",\"state\":\"OR\",\"auction\":5} and nothing", r.Bytes, r.Err, res[1].Bytes)
	}
	return "auctions of category 10 pass; sellers in OR join, in WY do not", nil
}

func expectNexmarkQ7(s *suite, inst *runtime.Instance) (string, error) {
	key := []byte("all")
	acc, failed, err := fold(s, inst, key, nil, values(
		`{"auction":1,"bidder":2,"price":5,"dateTime":9}`, `{"auction":3,"bidder":4,"price":7,"dateTime":9}`,
		`{"id":1}`, `{"auction":0,"bidder":1,"price":7,"dateTime":8}`), 4)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{2}) {
		return "", errorf("failed records: got %v, want [2] (not a bid)", failed)
	}
	r, err := s.result(inst, key, acc)
	if err != nil {
		return "", err
	}
	if want := `"{\"price\":7,\"bids\":[{\"auction\":0,\"bidder\":1,\"dateTime\":8},{\"auction\":3,\"bidder\":4,\"dateTime\":9}]}"`; r != want {
		return "", errorf("result: got %s, want %s", r, want)
	}
	return "the highest price and its bids in time order; a non-bid is refused", nil
}

func expectNexmarkCount(s *suite, inst *runtime.Instance) (string, error) {
	key := []byte("k")
	acc, _, err := fold(s, inst, key, nil, values("a", "", `{"x":1}`), 3)
	if err != nil {
		return "", err
	}
	r, err := s.result(inst, key, acc)
	if err != nil {
		return "", err
	}
	if want := `"{\"count\":3}"`; r != want {
		return "", errorf("result: got %s, want %s", r, want)
	}
	return "counts every record", nil
}

func expectNexmarkOne(s *suite, inst *runtime.Instance) (string, error) {
	keys, err := inst.Key(s.ctx, []abi.Record{{Key: []byte("x"), Value: []byte("v")}, {}}, nil)
	if err != nil {
		return "", err
	}
	for _, k := range keys {
		if k.Err != nil || string(k.Bytes) != "all" {
			return "", errorf("key: got %q (error %v), want all", k.Bytes, k.Err)
		}
	}
	return `every record gets the key "all"`, nil
}

func expectNexmarkQ8(s *suite, inst *runtime.Instance) (string, error) {
	person, auction := `{"id":7,"name":"Ann \u00e9","emailAddress":"a@b"}`, `{"id":1000,"itemName":"x","seller":7,"category":10}`
	keys, err := inst.Key(s.ctx, values(person, auction, `{"bidder":7}`), nil)
	if err != nil {
		return "", err
	}
	if string(keys[0].Bytes) != "7" || string(keys[1].Bytes) != "7" || keys[2].Err == nil {
		return "", errorf("keys: got %q, %q, %v, want 7, 7 and a refused bid", keys[0].Bytes, keys[1].Bytes, keys[2].Err)
	}
	key := []byte("7")
	alone, _, err := fold(s, inst, key, nil, values(person), 1)
	if err != nil {
		return "", err
	}
	if r, err := s.result(inst, key, alone); err != nil || r != "nil" {
		return "", errorf("a person without an auction: got %s (error %v), want nothing", r, err)
	}
	both, failed, err := fold(s, inst, key, nil, values(auction, `{"bidder":7}`, person, auction), 2)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{1}) {
		return "", errorf("failed records: got %v, want [1] (a bid)", failed)
	}
	want := `"{\"person\":7,\"name\":\"Ann \\u00e9\"}"`
	if r, err := s.result(inst, key, both); err != nil || r != want {
		return "", errorf("result: got %s (error %v), want %s", r, err, want)
	}
	return "persons keyed by id, auctions by seller; a window with both reports the person once", nil
}

func expectNexmarkQ5(s *suite, inst *runtime.Instance) (string, error) {
	key := []byte("10000")
	acc, failed, err := fold(s, inst, key, nil, values(
		`{"auction":5,"count":3,"start":0,"end":10000}`, `{"auction":9,"count":1,"start":0,"end":10000}`,
		`{"x":1}`, `{"auction":2,"count":3,"start":0,"end":10000}`), 4)
	if err != nil {
		return "", err
	}
	if !slices.Equal(failed, []int{2}) {
		return "", errorf("failed records: got %v, want [2] (not a tagged count)", failed)
	}
	r, err := s.result(inst, key, acc)
	if err != nil {
		return "", err
	}
	if want := `"{\"start\":0,\"end\":10000,\"count\":3,\"auctions\":[2,5]}"`; r != want {
		return "", errorf("result: got %s, want %s", r, want)
	}
	if _, err := expectProcess([]abi.Record{{Key: key, Value: []byte(`{"start":0,"end":10000,"count":3,"auctions":[2,5]}`)}}, []string{
		`k="10000" v="{\"Start\":0,\"End\":10000,\"Auction\":2,\"Count\":3}" t=0;k="10000" v="{\"Start\":0,\"End\":10000,\"Auction\":5,\"Count\":3}" t=0;`,
	})(s, inst); err != nil {
		return "", err
	}
	return "the auctions with the most counts of a window, split one per record", nil
}
