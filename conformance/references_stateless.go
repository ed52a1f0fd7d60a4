package conformance

import (
	"strconv"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/runtime"
)

// The Nexmark guests of the stateless queries of Flink's suite
// (guests/go/nx-q10, nx-q13, nx-q14, nx-q21, nx-q22), Go-only.
// nexmark/queries_stateless.go holds their references; these cases pin
// one exact behaviour of each.
func init() {
	references["nx-q10"] = []refCase{{"logs-with-day-and-minute", expectProcess(keptRecords(
		`{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"u","dateTime":1436918400000,"extra":"a\"\u00e9"}`,
		` {"extra":"", "dateTime":1436962530000 ,"price":-1,"bidder":2,"auction":3} `,
		`{"auction":1,"bidder":2,"price":3,"dateTime":-1,"extra":"x"}`,
		`{"id":1,"name":"n","emailAddress":"e"}`,
		`{"auction":1,"bidder":2,"price":3,"dateTime":253402300800000,"extra":""}`,
	), []string{
		kept(`{"auction":1000,"bidder":1001,"price":32530001,"dateTime":1436918400000,"extra":"a\"\u00e9","dt":"2015-07-15","hm":"00:00"}`),
		kept(`{"auction":3,"bidder":2,"price":-1,"dateTime":1436962530000,"extra":"","dt":"2015-07-15","hm":"12:15"}`),
		kept(`{"auction":1,"bidder":2,"price":3,"dateTime":-1,"extra":"x","dt":"1969-12-31","hm":"23:59"}`),
		"error 2", "error 2",
	})}}
	references["nx-q13"] = []refCase{{"keys-by-auction-mod-10000", expectNexmarkQ13Key}, {"joins-side-input-rows", expectNexmarkQ13Join}}
	references["nx-q14"] = []refCase{{"calculates-selected-prices", expectProcess(keptRecords(
		`{"auction":1,"bidder":2,"price":1101322,"channel":"c","url":"u","dateTime":28800000,"extra":"c\u0063C"}`,
		`{"auction":1,"bidder":2,"price":1101321,"dateTime":28800000,"extra":"c"}`,
		`{"auction":1,"bidder":2,"price":55066080,"dateTime":28800000,"extra":"c"}`,
		`{"auction":1,"bidder":2,"price":2000000,"dateTime":25200000,"extra":""}`,
		`{"auction":1,"bidder":2,"price":55066079,"dateTime":-1,"extra":"cc"}`,
		`{"id":1,"name":"n","emailAddress":"e"}`,
		`{"auction":1,"bidder":2,"price":1,"dateTime":4}`,
	), []string{
		kept(`{"auction":1,"bidder":2,"price":1000000.376,"bidTimeType":"dayTime","dateTime":28800000,"extra":"c\u0063C","c_counts":2}`),
		"", "",
		kept(`{"auction":1,"bidder":2,"price":1816000.000,"bidTimeType":"otherTime","dateTime":25200000,"extra":"","c_counts":0}`),
		kept(`{"auction":1,"bidder":2,"price":49999999.732,"bidTimeType":"nightTime","dateTime":-1,"extra":"cc","c_counts":2}`),
		"error 2", "error 2",
	})}}
	references["nx-q21"] = []refCase{{"adds-channel-ids", expectProcess(keptRecords(
		`{"auction":1000,"bidder":1001,"price":5,"channel":"FaceBook","url":"https://x/?q=1&channel_id=9","dateTime":0,"extra":""}`,
		`{"auction":1000,"bidder":1001,"price":3126206,"channel":"channel-738","url":"https://www.nexmark.com/wse/rci/zmha/item.htm?query=1&channel_id=1195376640","dateTime":0,"extra":""}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"https://x/?channel_id=5"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"a&channel_id="}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"\u0041pple","url":""}`,
		`{"id":1,"name":"n","emailAddress":"e"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"apple"}`,
	), []string{
		kept(`{"auction":1000,"bidder":1001,"price":5,"channel":"FaceBook","channel_id":"2"}`),
		kept(`{"auction":1000,"bidder":1001,"price":3126206,"channel":"channel-738","channel_id":"1195376640"}`),
		"",
		kept(`{"auction":1,"bidder":2,"price":3,"channel":"c","channel_id":""}`),
		kept(`{"auction":1,"bidder":2,"price":3,"channel":"\u0041pple","channel_id":"0"}`),
		"error 2", "error 2",
	})}}
	references["nx-q22"] = []refCase{{"splits-url-directories", expectProcess(keptRecords(
		`{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":0,"extra":""}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"https://x/a//"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"https://x/y"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"\u0041","url":""}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"a:\/\/h\/d\u00e9\/\"q\"\/\\"}`,
		`{"id":1,"name":"n","emailAddress":"e"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"c","url":null}`,
	), []string{
		kept(`{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","dir1":"rvx","dir2":"xssd","dir3":"leql"}`),
		kept(`{"auction":1,"bidder":2,"price":3,"channel":"c","dir1":"a","dir2":"","dir3":""}`),
		kept(`{"auction":1,"bidder":2,"price":3,"channel":"c","dir1":"y","dir2":null,"dir3":null}`),
		kept(`{"auction":1,"bidder":2,"price":3,"channel":"\u0041","dir1":null,"dir2":null,"dir3":null}`),
		kept("{\"auction\":1,\"bidder\":2,\"price\":3,\"channel\":\"c\",\"dir1\":\"d\u00e9\",\"dir2\":\"\\\"q\\\"\",\"dir3\":\"\\\\\"}"),
		"error 2", "error 2",
	})}}
}

// keptRecords are records of the values vs, each with the key "1000",
// the timestamp 9 and a header, which a map or filter of the stateless
// queries keeps.
func keptRecords(vs ...string) []abi.Record {
	recs := values(vs...)
	for i := range recs {
		recs[i].Key, recs[i].Timestamp, recs[i].Headers = []byte("1000"), 9, []abi.Header{{Key: "h", Value: []byte("x")}}
	}
	return recs
}

// kept describes the output of value v for a record of keptRecords.
func kept(v string) string {
	return `k="1000" v=` + strconv.Quote(v) + ` t=9 h["h"]="x";`
}

func expectNexmarkQ13Key(s *suite, inst *runtime.Instance) (string, error) {
	keys, err := inst.Key(s.ctx, values(
		`{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"u","dateTime":1436918400000,"extra":"e"}`,
		`{"auction":1234567,"bidder":1}`, `{"auction":20000,"bidder":1}`, `{"auction":-3,"bidder":1}`,
		`{"id":1,"seller":2}`, `{"bidder":1,"auction":"5"}`,
	), nil)
	if err != nil {
		return "", err
	}
	for i, want := range []string{"1000", "4567", "0", "-3"} {
		if k := keys[i]; k.Err != nil || string(k.Bytes) != want {
			return "", errorf("key %d: got %q (error %v), want %s", i, k.Bytes, k.Err, want)
		}
	}
	for i, reason := range map[int]string{4: `value is not a bid: no "bidder" member`, 5: `"auction" is not an integer`} {
		if e := keys[i].Err; e == nil || e.Code != abi.CodeBadInput || e.Reason != reason {
			return "", errorf("key %d: got %q (error %v), want BAD_INPUT (code 2) %q", i, keys[i].Bytes, e, reason)
		}
	}
	return "a bid's key is its auction modulo 10,000, the sign kept; an auction or a string auction is refused", nil
}

func expectNexmarkQ13Join(s *suite, inst *runtime.Instance) (string, error) {
	bid := []byte(`{"auction":1234567,"bidder":1001,"price":32530001,"channel":"Facebook","url":"u","dateTime":-8,"extra":"e"}`)
	row := []byte(`{"key":4567,"value":"4567"}`)
	left := [][]byte{bid, bid, bid, nil, []byte(`{"id":1,"seller":2}`), bid}
	right := [][]byte{row, []byte(` { "value" : "a\"\u00e9" , "key":4567 } `), nil, row, row, []byte(`{"key":4567,"value":4567}`)}
	keys := make([][]byte, len(left))
	for i := range keys {
		keys[i] = []byte("4567")
	}
	res, err := inst.Join(s.ctx, keys, left, right, nil)
	if err != nil {
		return "", err
	}
	const joined = `{"auction":1234567,"bidder":1001,"price":32530001,"dateTime":-8,"value":`
	for i, want := range []string{joined + `"4567"}`, joined + `"a\"\u00e9"}`, "", ""} {
		if r := res[i]; r.Err != nil || string(r.Bytes) != want || want == "" && r.Bytes != nil {
			return "", errorf("pair %d: got %q (error %v), want %q", i, r.Bytes, r.Err, want)
		}
	}
	for i, reason := range map[int]string{4: `left: value is not a bid: no "bidder" member`, 5: `right: "value" is neither a string nor null`} {
		if e := res[i].Err; e == nil || e.Code != abi.CodeBadInput || e.Reason != reason {
			return "", errorf("pair %d: got %q (error %v), want BAD_INPUT (code 2) %q", i, res[i].Bytes, e, reason)
		}
	}
	return "a bid joins its side input row into q13's row, the value as it is; a missing side emits nothing; an auction on the left is refused", nil
}
