//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package host

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes an exclusive flock on path, writing this process's id into
// it for the message of a claim that finds it taken. flock locks belong to
// an open file, so a second claim in the same process fails too.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		var b [32]byte
		n, _ := f.ReadAt(b[:], 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid := strings.TrimSpace(string(b[:n])); pid != "" {
				return nil, fmt.Errorf("%w (process %s)", ErrDataDirInUse, pid)
			}
			return nil, ErrDataDirInUse
		}
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
