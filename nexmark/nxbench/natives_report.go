package nxbench

import "github.com/eddy-streams/eddy/runtime"

// reportNatives are the functions of reportQueries.
func reportNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{}
}
