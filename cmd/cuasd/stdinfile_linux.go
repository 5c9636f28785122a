package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// memFiles keeps the in-memory files open for the life of the process:
// their /proc paths are links to them (and an *os.File left to the garbage
// collector would be closed).
var memFiles []*os.File

// memFile holds b in an anonymous in-memory file (memfd, mode 0600) and
// returns a path that opens it, as often as needed, from the start. Nothing
// reaches a disk: keys and tokens come this way.
func memFile(name string, b []byte) (string, error) {
	fd, err := unix.MemfdCreate("cuasd-"+name, unix.MFD_CLOEXEC)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), name)
	if err := unix.Fchmod(fd, 0o600); err != nil {
		f.Close()
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return "", err
	}
	memFiles = append(memFiles, f)
	return fmt.Sprintf("/proc/self/fd/%d", fd), nil
}
