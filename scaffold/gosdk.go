package scaffold

import (
	_ "embed"
	"io/fs"
)

//go:embed gosdk.txtar
var goSDK []byte

// GoSDK returns the snapshot of the Go SDK's files.
func GoSDK() (fs.FS, error) { return parseSnapshot(goSDK) }
