// Package dirlock takes an exclusive lock on a data directory, so that two
// cuasd processes can never share one: two writers of one ledger would
// give out the same receipt indexes and sign two different histories of
// one log.
//
// The lock is an flock(2) on the file cuasd.lock in the directory, which
// also records the holder's pid. The kernel releases it when the process
// exits, however it exits, so a crash never leaves a stale lock behind.
package dirlock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileName is the lock file inside the directory.
const FileName = "cuasd.lock"

// Error says why a directory could not be locked.
type Error struct {
	Dir string
	// HolderPID is the pid recorded by the process that holds the lock (0
	// when unknown).
	HolderPID int
	Err       error
}

func (e *Error) Error() string {
	if e.HolderPID > 0 {
		return fmt.Sprintf("%s is in use by another cuasd (pid %d, lock %s): %v",
			e.Dir, e.HolderPID, filepath.Join(e.Dir, FileName), e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Dir, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Lock is a held lock.
type Lock struct {
	f *os.File
}

// Acquire creates dir when needed (mode 0700) and locks it, failing at
// once, without waiting, when another process holds the lock.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &Error{Dir: dir, Err: err}
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &Error{Dir: dir, Err: err}
	}
	if err := lockFile(f); err != nil {
		pid := readPID(f)
		f.Close()
		return nil, &Error{Dir: dir, HolderPID: pid, Err: err}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release unlocks the directory. The lock file stays (removing it would
// race with a process that has just opened it).
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = unlockFile(l.f)
	err := l.f.Close()
	l.f = nil
	return err
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}
