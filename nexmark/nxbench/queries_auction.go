package nxbench

// auctionQueries are q4, q6, q9 and q20: auctions closed by timers, and a stream-stream join.
var auctionQueries = map[string]Query{}
