// Command nx-q21 is the Flink Nexmark suite's query 21, add a channel ID,
// as an Eddy process function for a filter step (zero or one output per
// input): a bid with a channel ID becomes
//
//	{"auction":A,"bidder":B,"price":P,"channel":C,"channel_id":I}
//
// and a bid without one is dropped (nexmark.Q21 is the reference). A, B
// and P are the bid's integers in decimal, C its "channel" string as it is
// in the value (escapes and all). I is a JSON string: "0", "1", "2" or "3"
// when the channel, lower-cased, is apple, google, facebook or baidu;
// otherwise REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2), the text
// after the first "channel_id=" that starts the URL or follows an '&', up
// to the next '&' or the end (maybe empty; without such a parameter the
// bid has no channel ID). The key, timestamp and headers are kept.
//
// The channel is compared as Java lowers it (Flink's LOWER, in a locale
// other than Turkish): strings.EqualFold agrees with that on these four
// names, the Kelvin sign matching k and the dotted capital I matching no
// i. Channel and URL are unescaped before they are read, and an ID taken
// from an escaped URL is escaped again.
//
// The value must be a Nexmark bid in JSON (nexmark.AppendJSON; any member
// order and white space): an object with a "bidder" member, integer
// "auction", "bidder" and "price" members and string "channel" and "url"
// members. Anything else fails with BAD_INPUT, selected or not.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q21.wasm ./nx-q21
package main

import (
	"bytes"
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q21", "1.0.0")
	eddy.FlatMap(addChannelID)
}

func main() {}

// hotChannels are the channels with a well-known ID, in ID order.
var hotChannels = [...][]byte{[]byte("apple"), []byte("google"), []byte("facebook"), []byte("baidu")}

// idKey is the URL parameter that holds a channel ID.
var idKey = []byte("channel_id=")

var errNotBid = errors.New(`value is not a bid: no "bidder" member`)

var (
	ev       nxevent.Event
	buf      []byte         // the output value
	out      [1]eddy.Record // the output; the SDK copies both before the next record
	chBuf    []byte         // the unescaped channel, when it has escapes
	urlBuf   []byte         // the unescaped URL, when it has escapes
	hotIDs   = [...]string{`"0"`, `"1"`, `"2"`, `"3"`}
	members3 = [...]nxevent.Member{nxevent.Auction, nxevent.Bidder, nxevent.Price}
)

func addChannelID(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	var v [3]int64
	for i, m := range members3 {
		n, err := ev.Int(m)
		if err != nil {
			return nil, eddy.BadInput(err)
		}
		v[i] = n
	}
	channel, err := ev.Str(nxevent.Channel)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	url, err := ev.Str(nxevent.URL)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, v[0])
	b = append(b, `,"bidder":`...)
	b = nxevent.AppendInt(b, v[1])
	b = append(b, `,"price":`...)
	b = nxevent.AppendInt(b, v[2])
	b = append(b, `,"channel":`...)
	b = append(b, channel...)
	b = append(b, `,"channel_id":`...)
	if hot := hotIndex(unescape(&chBuf, channel)); hot >= 0 {
		b = append(b, hotIDs[hot]...)
	} else {
		raw := url[1 : len(url)-1]
		id, ok := channelID(unescape(&urlBuf, url))
		if !ok {
			buf = b
			return nil, nil
		}
		if bytes.IndexByte(raw, '\\') < 0 {
			// Taken from the raw string, which needs no escapes.
			b = append(b, '"')
			b = append(b, id...)
			b = append(b, '"')
		} else {
			b = appendString(b, id)
		}
	}
	buf = append(b, '}')
	r.Value = buf
	out[0] = r
	return out[:], nil
}

// unescape returns the text of a raw JSON string (valid: Parse checked
// it): its contents when they have no escapes, else the contents unescaped
// into *scratch.
func unescape(scratch *[]byte, tok []byte) []byte {
	raw := tok[1 : len(tok)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	*scratch = jsonscan.Unescape((*scratch)[:0], raw)
	return *scratch
}

// hotIndex returns the ID of a well-known channel, or -1.
func hotIndex(channel []byte) int {
	for i, h := range hotChannels {
		if bytes.EqualFold(channel, h) {
			return i
		}
	}
	return -1
}

// channelID is REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2): the
// leftmost match starts at the first "channel_id=" that starts the URL or
// follows an '&', and its second group runs to the next '&'.
func channelID(url []byte) ([]byte, bool) {
	for i := 0; ; {
		j := bytes.Index(url[i:], idKey)
		if j < 0 {
			return nil, false
		}
		if j += i; j == 0 || url[j-1] == '&' {
			id := url[j+len(idKey):]
			if k := bytes.IndexByte(id, '&'); k >= 0 {
				id = id[:k]
			}
			return id, true
		}
		i = j + 1
	}
}

// appendString appends s as a JSON string, escaping '"', '\\' and control
// bytes (other bytes, invalid UTF-8 included, as they are).
func appendString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
