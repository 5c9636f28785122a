// Package secretfile reads the small files that hold secrets (webhook
// keys, passwords, token and user lists): from regular files only, and
// no more than a stated size. A path such as /dev/zero, a FIFO or a
// directory was read without limit, or blocked, and held the start (issue
// 32); now it fails at once naming the file and why.
package secretfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Error is the error type of package secretfile. It names the file, never
// its content.
type Error struct {
	Path string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	s := e.Path + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// MaxKey bounds a file that holds one key or password.
const MaxKey = 4 << 10

// ErrTooLarge is wrapped by the error of a file over its limit.
var ErrTooLarge = errors.New("too large")

// ErrNotRegular is wrapped by the error of a path that is not a regular
// file (a device, FIFO, socket or directory).
var ErrNotRegular = errors.New("not a regular file")

// Read returns the content of the regular file at path (a symbolic link
// to one is followed, as Kubernetes secret volumes need), of at most max
// bytes. It never opens anything else: a FIFO would block the open.
func Read(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot read", Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("is a %s", kind(st.Mode())), Err: ErrNotRegular}
	}
	if st.Size() > max {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("holds %d bytes, at most %d are read", st.Size(), max), Err: ErrTooLarge}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot read", Err: err}
	}
	defer f.Close()
	// The file may have been replaced between Stat and Open: check what
	// was opened, and read no more than max whatever its size says.
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, &Error{Path: path, Msg: "changed while opened", Err: ErrNotRegular}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &Error{Path: path, Msg: "cannot read", Err: err}
	}
	if int64(len(b)) > max {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("holds more than %d bytes", max), Err: ErrTooLarge}
	}
	return b, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory, not a regular file"
	case m&os.ModeNamedPipe != 0:
		return "FIFO, not a regular file"
	case m&os.ModeSocket != 0:
		return "socket, not a regular file"
	case m&os.ModeDevice != 0:
		return "device, not a regular file"
	}
	return "special file, not a regular file"
}
