package main

import (
	"encoding/json"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// Events in nexmark.AppendJSON's layout.
const (
	auction10 = `{"id":1001,"itemName":"z ck w","description":"cwlachrnkfzkygsu","initialBid":25626290,"reserve":28805847,"dateTime":1436918400000,"expires":1436918400202,"seller":1000,"category":10,"extra":"jzlkehMZPLIIwtopffS\\KHLRhdduqtifpeko"}`
	auction13 = `{"id":1000,"itemName":"wkx mgee","description":"eszpqxtdxrvwmmywkmogoahf","initialBid":28873,"reserve":29448,"dateTime":1436918400000,"expires":1436918400011,"seller":1000,"category":13,"extra":"zcurskufssowmihzpmZHWQM"}`
	personOR  = `{"id":1000,"name":"Peter Jones","emailAddress":"nhd@xcat.com","creditCard":"7241 7320 9143 4888","city":"Portland","state":"OR","dateTime":1436918400000,"extra":"WN_HS_bnpkkiwhwana_L^"}`
	personWY  = `{"id":1000,"name":"Peter Jones","emailAddress":"nhd@xcat.com","creditCard":"7241 7320 9143 4888","city":"Portland","state":"WY","dateTime":1436918400000,"extra":"WN_HS_bnpkkiwhwana_L^"}`
	bid       = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwg"}`
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name, value string
		code        int
		kept        bool
		reason      string
	}{
		{"category 10", auction10, 0, true, ""},
		{"category 13", auction13, 0, false, ""},
		{"any layout", `{ "category" : 10, "seller": 5 }`, 0, true, ""},
		{"person", personOR, 0, false, ""},
		{"bid", bid, 0, false, ""},
		{"bid with a category", `{"bidder":1,"category":10,"seller":3}`, 0, false, ""},
		{"other object", `{"category":10}`, 0, false, ""},
		{"no category", `{"itemName":"x"}`, eddytest.BadInput, false, `no "category" member`},
		{"bad category", `{"itemName":"x","category":"10"}`, eddytest.BadInput, false, `"category" is not an integer`},
		{"not an object", `10`, eddytest.BadInput, false, "value is not a JSON object"},
		{"invalid", `{`, eddytest.BadInput, false, "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Process(eddy.Record{Key: []byte("k"), Value: []byte(tt.value), Timestamp: 3})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Code != tt.code || r.Code != 0 && r.Reason != tt.reason {
				t.Fatalf("code %d %q, want %d %q", r.Code, r.Reason, tt.code, tt.reason)
			}
			if kept := len(r.Records) == 1; r.Code == 0 && kept != tt.kept {
				t.Fatalf("kept %v", kept)
			}
			if tt.kept && string(r.Records[0].Value) != tt.value {
				t.Fatalf("changed: %s", r.Records[0].Value)
			}
		})
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		name        string
		left, right []byte
		code        int
		want        string // the joined value, "" for none, or the reason
	}{
		{"OR", []byte(auction10), []byte(personOR), 0, `{"name":"Peter Jones","city":"Portland","state":"OR","auction":1001}`},
		{"ID", []byte(auction10), []byte(`{"name":"A","city":"Boise","state":"ID"}`), 0, `{"name":"A","city":"Boise","state":"ID","auction":1001}`},
		{"CA, escapes kept", []byte(`{"id":-5,"seller":1}`), []byte(`{"name":"A \"B\"","city":"L\u00e1","state":"C\u0041"}`), 0,
			`{"name":"A \"B\"","city":"L\u00e1","state":"C\u0041","auction":-5}`},
		{"WY", []byte(auction10), []byte(personWY), 0, ""},
		{"lower case", []byte(auction10), []byte(`{"name":"A","city":"B","state":"or"}`), 0, ""},
		{"no person", []byte(auction10), nil, 0, ""},
		{"no auction", nil, []byte(personOR), 0, ""},
		{"left is a bid", []byte(bid), []byte(personOR), eddytest.BadInput, "left: value is not an auction"},
		{"left invalid", []byte(`{`), []byte(personOR), eddytest.BadInput, "left: value is not valid JSON"},
		{"left without id", []byte(`{"seller":1}`), []byte(personOR), eddytest.BadInput, `left: no "id" member`},
		{"right is an auction", []byte(auction10), []byte(auction13), eddytest.BadInput, "right: value is not a person"},
		{"right not an object", []byte(auction10), []byte(`[]`), eddytest.BadInput, "right: value is not a JSON object"},
		{"right without city", []byte(auction10), []byte(`{"name":"A","state":"OR"}`), eddytest.BadInput, `right: no "city" member`},
		{"right state not a string", []byte(auction10), []byte(`{"name":"A","city":"B","state":1}`), eddytest.BadInput, `right: "state" is not a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Join(eddytest.JoinItem{Key: []byte("1000"), Left: tt.left, Right: tt.right})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Code != tt.code {
				t.Fatalf("code %d %q, want %d", r.Code, r.Reason, tt.code)
			}
			if r.Code != 0 {
				if r.Reason != tt.want {
					t.Fatalf("reason %q, want %q", r.Reason, tt.want)
				}
				return
			}
			if string(r.Value) != tt.want || tt.want == "" && r.Value != nil {
				t.Fatalf("value %q, want %q", r.Value, tt.want)
			}
			if tt.want != "" && !json.Valid(r.Value) {
				t.Fatal("not JSON")
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	r := eddy.Record{Value: []byte(auction10)}
	left, right := []byte(auction10), []byte(personOR)
	keep(r)
	join(nil, left, right)
	if n := testing.AllocsPerRun(100, func() { keep(r) }); n != 0 {
		t.Errorf("filter: %v allocations per record", n)
	}
	if n := testing.AllocsPerRun(100, func() { join(nil, left, right) }); n != 0 {
		t.Errorf("join: %v allocations per record", n)
	}
}
