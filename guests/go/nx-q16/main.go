// Command nx-q16 is Nexmark's query 16, the bidding statistics of a
// channel on a day, as Eddy functions: a key function giving a bid its
// channel (unescaped) as its key, then, after that key_by, a map step with
// state: true (the distinct step) and an aggregate in tumbling windows of
// a day, which emits one row per channel and day when its window closes:
//
//	{"channel":"Google","day":"2015-07-15","minute":"HH:mm","total_bids":N,...,"rank3_auctions":N}
//
// the counts of nx-q15 over the channel's bids, and the time of day of its
// last bid of the day (max(DATE_FORMAT(dateTime, 'HH:mm'))). The channel is
// the record key, as the key_by made it. The steps, their state and
// accumulators are guests/go/nx-daystats'. A value that is not a Nexmark
// bid with integer "bidder", "auction", "price" and "dateTime" (in the
// years 0000 to 9999) and a string "channel" fails with BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q16.wasm ./nx-q16
package main

import daystats "github.com/eddy-streams/eddy/guests/go/nx-daystats"

func init() { daystats.Register("nx-q16", true) }

func main() {}
