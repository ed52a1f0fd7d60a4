package nxbench

// statelessQueries are q10, q13, q14, q21 and q22: maps, filters and a side-input join.
var statelessQueries = map[string]Query{}
