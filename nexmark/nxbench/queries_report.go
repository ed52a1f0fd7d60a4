package nxbench

// reportQueries are q15–q19: per-day statistics, last bid, top 10.
var reportQueries = map[string]Query{}
