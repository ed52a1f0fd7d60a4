package nxbench

import "github.com/eddy-streams/eddy/runtime"

// auctionNatives are the functions of auctionQueries.
func auctionNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{}
}
