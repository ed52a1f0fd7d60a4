//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package host

import "os"

// lockDir opens path without locking it: this system has no flock. Two
// nodes on one data directory are not detected here (Badger still refuses
// a second opening of a stateful node's database).
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
