package main

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// Bids of nexmark's default stream (nexmark.AppendJSON): one on a hot
// channel, one on another channel with a channel_id parameter.
const (
	hotBid   = `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","url":"https://www.nexmark.com/rvx/xssd/leql/item.htm?query=1","dateTime":1436918400000,"extra":"fdiysaV^]NLVsbolvyqwgticfdrwdyiyofziYMU\\Z` + "`" + `UaTQO][NX\\RM]WPYTOuwogvszlxjrcNOORM"}`
	otherBid = `{"auction":1000,"bidder":1001,"price":3126206,"channel":"channel-738","url":"https://www.nexmark.com/wse/rci/zmha/item.htm?query=1&channel_id=1195376640","dateTime":1436918400000,"extra":"byxajvVIJV^VKUUY` + "`" + `RJaVNU` + "`" + `^QIWNHgdvnfxZQ]H_PbustqrpqasinNX` + "`" + `Q[_YKKNP\\"}`
)

// b is a bid with the given raw channel and URL.
func b(channel, url string) string {
	return `{"auction":1,"bidder":2,"price":3,"channel":` + channel + `,"url":` + url + `}`
}

// row is the output for b(channel, url) with the raw channel ID id.
func row(channel, id string) string {
	return `{"auction":1,"bidder":2,"price":3,"channel":` + channel + `,"channel_id":` + id + `}`
}

func TestQ21(t *testing.T) {
	tests := []struct {
		name, value string
		code        int
		want        string // the output value, "" for none, or the failure reason
	}{
		{"hot channel", hotBid, 0, `{"auction":1000,"bidder":1001,"price":32530001,"channel":"Facebook","channel_id":"2"}`},
		{"channel_id parameter", otherBid, 0, `{"auction":1000,"bidder":1001,"price":3126206,"channel":"channel-738","channel_id":"1195376640"}`},
		{"apple", b(`"APPLE"`, `"u"`), 0, row(`"APPLE"`, `"0"`)},
		{"google", b(`"gOoGlE"`, `"u"`), 0, row(`"gOoGlE"`, `"1"`)},
		{"baidu", b(`"baidu"`, `"u"`), 0, row(`"baidu"`, `"3"`)},
		{"escaped channel", b(`"\u0041pple"`, `"u"`), 0, row(`"\u0041pple"`, `"0"`)},
		{"Kelvin sign", b(`"FACEBOO\u212a"`, `"u"`), 0, row(`"FACEBOO\u212a"`, `"2"`)},
		{"Kelvin sign in UTF-8", b("\"faceboo\u212a\"", `"u"`), 0, row("\"faceboo\u212a\"", `"2"`)},
		{"dotted capital I", b(`"BA\u0130DU"`, `"u"`), 0, ""},
		{"longer name", b(`"apples"`, `"u"`), 0, ""},
		{"hot channel wins", b(`"Apple"`, `"x&channel_id=9"`), 0, row(`"Apple"`, `"0"`)},
		{"at the start", b(`"c"`, `"channel_id=5&x"`), 0, row(`"c"`, `"5"`)},
		{"after ?", b(`"c"`, `"https://x/?channel_id=5"`), 0, ""},
		{"empty", b(`"c"`, `"a&channel_id="`), 0, row(`"c"`, `""`)},
		{"not after &", b(`"c"`, `"a&xchannel_id=1&channel_id=2"`), 0, row(`"c"`, `"2"`)},
		{"the first", b(`"c"`, `"&channel_id=1&channel_id=2"`), 0, row(`"c"`, `"1"`)},
		{"line break", b(`"c"`, `"a&channel_id=x\ny&z"`), 0, row(`"c"`, `"x\u000ay"`)},
		{"escaped URL", b(`"c"`, `"a\u0026channel_id=\"q\"\/"`), 0, row(`"c"`, `"\"q\"/"`)},
		{"escaped &", b(`"c"`, `"a&channel_id=1\u0026b"`), 0, row(`"c"`, `"1"`)},
		{"no parameter", b(`"c"`, `""`), 0, ""},
		{"any layout", ` {"url":"channel_id=7", "price" : 3 ,"bidder":2,"channel":"c","auction":1} `, 0, row(`"c"`, `"7"`)},
		{"person", `{"id":1,"name":"n","emailAddress":"e"}`, eddytest.BadInput, `value is not a bid: no "bidder" member`},
		{"no url", `{"auction":1,"bidder":2,"price":3,"channel":"apple"}`, eddytest.BadInput, `no "url" member`},
		{"channel not a string", `{"auction":1,"bidder":2,"price":3,"channel":1,"url":""}`, eddytest.BadInput, `"channel" is not a string`},
		{"no price", `{"auction":1,"bidder":2,"channel":"c","url":""}`, eddytest.BadInput, `no "price" member`},
		{"array", `[1]`, eddytest.BadInput, "value is not a JSON object"},
		{"truncated", hotBid[:100], eddytest.BadInput, "value is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := eddytest.Process(eddy.Record{Key: []byte("1000"), Value: []byte(tt.value), Timestamp: 9,
				Headers: []eddy.Header{{Key: "h", Value: []byte("v")}}})
			if err != nil {
				t.Fatal(err)
			}
			got := res[0]
			if got.Code != tt.code {
				t.Fatalf("code %d (%s), want %d", got.Code, got.Reason, tt.code)
			}
			if tt.code != 0 {
				if got.Reason != tt.want {
					t.Fatalf("reason %q, want %q", got.Reason, tt.want)
				}
				return
			}
			if tt.want == "" {
				if len(got.Records) != 0 {
					t.Fatalf("kept: %s", got.Records[0].Value)
				}
				return
			}
			if len(got.Records) != 1 {
				t.Fatalf("%d outputs", len(got.Records))
			}
			out := got.Records[0]
			if string(out.Value) != tt.want {
				t.Fatalf("output %s\nwant   %s", out.Value, tt.want)
			}
			if !json.Valid(out.Value) {
				t.Fatal("not JSON")
			}
			if string(out.Key) != "1000" || out.Timestamp != 9 || len(out.Headers) != 1 {
				t.Fatalf("key, timestamp or headers changed: %+v", out)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	for _, v := range []string{hotBid, otherBid} {
		r := eddy.Record{Value: []byte(v)}
		addChannelID(r)
		if n := testing.AllocsPerRun(100, func() { addChannelID(r) }); n != 0 {
			t.Fatalf("%v allocations per record", n)
		}
	}
}

// TestChannelIDAgreesWithTheExpression compares channelID with the
// regular expression (Go's regexp finds the leftmost match as Java's
// does), on random URLs of the pieces that matter.
func TestChannelIDAgreesWithTheExpression(t *testing.T) {
	re := regexp.MustCompile(`(&|^)channel_id=([^&]*)`)
	parts := []string{"channel_id=", "&", "x", "1", "?", "=", "channel_i", "\n"}
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 5000 {
		var url strings.Builder
		for range n % 12 {
			url.WriteString(parts[r.IntN(len(parts))])
		}
		got, ok := channelID([]byte(url.String()))
		m := re.FindStringSubmatch(url.String())
		if ok != (m != nil) || ok && string(got) != m[2] {
			t.Fatalf("channelID(%q) = %q, %v; the expression finds %q", url.String(), got, ok, m)
		}
	}
}
