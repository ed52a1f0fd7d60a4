package main

import (
	"testing"

	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// Events in nexmark.AppendJSON's layout.
const (
	bid10     = `{"auction":1001,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/x","dateTime":1436918400005,"extra":"fd\\iy"}`
	auction10 = `{"id":1001,"itemName":"z ck w","description":"cwl \"a\"","initialBid":25626290,"reserve":28805847,"dateTime":1436918400000,"expires":1436918400202,"seller":1000,"category":10,"extra":"jzlk"}`
	auction13 = `{"id":1000,"itemName":"wkx mgee","description":"eszp","initialBid":28873,"reserve":29448,"dateTime":1436918400000,"expires":1436918400011,"seller":1000,"category":13,"extra":"zcur"}`
	row       = `{"auction":1001,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/x","bid_dateTime":1436918400005,"bid_extra":"fd\\iy",` +
		`"itemName":"z ck w","description":"cwl \"a\"","initialBid":25626290,"reserve":28805847,"auction_dateTime":1436918400000,"expires":1436918400202,"seller":1000,"category":10,"auction_extra":"jzlk"}`
)

func TestJoin(t *testing.T) {
	for _, c := range []struct {
		name        string
		left, right string
		code        int
		want        string // the row, "" for none, or the reason
	}{
		{"category 10", bid10, auction10, 0, row},
		{"any layout", `{ "bidder":2, "auction":1, "price":3, "channel":"c", "url":"u", "dateTime":4, "extra":"" }`,
			`{"category":10,"seller":5,"itemName":"i","description":"d","initialBid":1,"reserve":2,"dateTime":3,"expires":4,"extra":"e"}`, 0,
			`{"auction":1,"bidder":2,"price":3,"channel":"c","url":"u","bid_dateTime":4,"bid_extra":"",` +
				`"itemName":"i","description":"d","initialBid":1,"reserve":2,"auction_dateTime":3,"expires":4,"seller":5,"category":10,"auction_extra":"e"}`},
		{"category 13", bid10, auction13, 0, ""},
		{"no auction", bid10, "", 0, ""},
		{"no bid", "", auction10, 0, ""},
		{"left is an auction", auction10, auction10, eddytest.BadInput, "left: value is not a bid"},
		{"right is a bid", bid10, bid10, eddytest.BadInput, "right: value is not an auction"},
		{"right invalid", bid10, `{`, eddytest.BadInput, "right: value is not valid JSON"},
		{"left not an object", `1`, auction10, eddytest.BadInput, "left: value is not a JSON object"},
		{"no category", bid10, `{"seller":1}`, eddytest.BadInput, `right: no "category" member`},
		{"bid without url", `{"bidder":1,"auction":1,"price":1,"channel":"c","dateTime":1,"extra":""}`, auction10, eddytest.BadInput, `left: no "url" member`},
		{"auction with a number for a name", bid10, `{"seller":1,"category":10,"itemName":5}`, eddytest.BadInput, `right: "itemName" is not a string`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l, r []byte
			if c.left != "" {
				l = []byte(c.left)
			}
			if c.right != "" {
				r = []byte(c.right)
			}
			res, err := eddytest.Join(eddytest.JoinItem{Key: []byte("k"), Left: l, Right: r})
			if err != nil {
				t.Fatal(err)
			}
			got := res[0]
			switch {
			case got.Code != c.code:
				t.Fatalf("code %d %q, want %d", got.Code, got.Reason, c.code)
			case c.code != 0 && got.Reason != c.want:
				t.Fatalf("reason %q, want %q", got.Reason, c.want)
			case c.code == 0 && string(got.Value) != c.want:
				t.Fatalf("got  %s\nwant %s", got.Value, c.want)
			}
		})
	}
}
