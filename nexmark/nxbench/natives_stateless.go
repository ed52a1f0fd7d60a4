package nxbench

import "github.com/eddy-streams/eddy/runtime"

// statelessNatives are the functions of statelessQueries.
func statelessNatives() map[string]func() runtime.Native {
	return map[string]func() runtime.Native{}
}
