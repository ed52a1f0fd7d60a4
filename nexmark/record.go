package nexmark

import (
	"strconv"

	"github.com/eddy-streams/eddy/abi"
)

// Key returns the event's partitioning key: the auction ID for bids and
// auctions, the person ID for persons. Bids and auctions of one auction
// therefore share a key (and a partition).
func (e Event) Key() int64 {
	switch {
	case e.Person != nil:
		return e.Person.ID
	case e.Auction != nil:
		return e.Auction.ID
	case e.Bid != nil:
		return e.Bid.Auction
	}
	return 0
}

// AppendKey appends [Event.Key] in decimal, the record key, to dst.
func AppendKey(dst []byte, ev Event) []byte { return strconv.AppendInt(dst, ev.Key(), 10) }

// Record returns ev as a Kafka record: the key from [AppendKey], the value
// from [AppendJSON] and the event time as timestamp, with no headers. The
// key and value are newly allocated; to reuse buffers, build the record
// from AppendKey and AppendJSON.
func Record(ev Event) abi.Record {
	// One allocation for the key and the value: bids are about 270 bytes
	// of JSON, auctions and persons up to twice that.
	buf := AppendKey(make([]byte, 0, 24+640), ev)
	k := len(buf)
	buf = AppendJSON(buf, ev)
	return abi.Record{Key: buf[:k:k], Value: buf[k:], Timestamp: ev.Time}
}
