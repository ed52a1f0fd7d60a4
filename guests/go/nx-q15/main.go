// Command nx-q15 is Nexmark's query 15, the bidding statistics of a day,
// as Eddy functions: after a key_by giving every bid one key, a map step
// with state: true (the distinct step) and an aggregate in tumbling windows
// of a day, which emits one row per day when its window closes:
//
//	{"day":"2015-07-15","total_bids":N,"rank1_bids":N,"rank2_bids":N,"rank3_bids":N,
//	 "total_bidders":N,...,"rank3_bidders":N,"total_auctions":N,...,"rank3_auctions":N}
//
// The bids, distinct bidders and distinct auctions of the day, in all and
// per price rank (below 10,000; below 1,000,000; the rest). The steps, their
// state and accumulators are guests/go/nx-daystats'; nx-q16 is the same per
// channel. A value that is not a Nexmark bid with integer "bidder",
// "auction", "price" and "dateTime" (in the years 0000 to 9999) fails with
// BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q15.wasm ./nx-q15
package main

import daystats "github.com/eddy-streams/eddy/guests/go/nx-daystats"

func init() { daystats.Register("nx-q15", false) }

func main() {}
