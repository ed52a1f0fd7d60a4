// Package sdk embeds the sources of the guest SDKs that live in this
// repository outside Go modules (Rust, C, AssemblyScript), so that `eddy new`
// can copy them into a new function project. The Go SDK is its own module,
// which go:embed cannot reach; package scaffold carries a snapshot of it.
package sdk

import (
	"embed"
	"io/fs"
)

//go:embed rust/src rust/README.md c/eddy.h c/eddy_msgpack.h c/README.md
//go:embed assemblyscript/assembly assemblyscript/package.json assemblyscript/package-lock.json assemblyscript/README.md
var embedded embed.FS

// languages are the embedded SDK folders.
var languages = []string{"rust", "c", "assemblyscript"}

// Sources returns each language's SDK files, keyed by language, rooted at
// the SDK's folder.
func Sources() map[string]fs.FS {
	out := map[string]fs.FS{}
	for _, lang := range languages {
		sub, err := fs.Sub(embedded, lang)
		if err != nil {
			panic(err) // the embed patterns above guarantee the folders
		}
		out[lang] = sub
	}
	return out
}
