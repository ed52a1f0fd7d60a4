// Package sdk embeds the sources of the guest SDKs that live in this
// repository outside Go modules (Rust, C, AssemblyScript), so that `eddy new`
// can copy them into a new function project. The Go SDK is its own module;
// package scaffold carries its snapshot.
package sdk

import "io/fs"

// Sources returns each language's SDK files, keyed by language.
func Sources() map[string]fs.FS {
	return map[string]fs.FS{}
}
