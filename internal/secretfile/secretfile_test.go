package secretfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRead: a regular file (or a link to one) within the limit is read; a
// device (/dev/zero was read for 1.8 GB), a FIFO (which would block the
// open), a directory and a file over the limit fail at once, naming the
// path and not the content.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "key")
	if err := os.WriteFile(ok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 5000), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ok, link} {
		if b, err := Read(p, 4096); err != nil || string(b) != "s3cret\n" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	for p, want := range map[string]error{"/dev/zero": ErrNotRegular, fifo: ErrNotRegular, dir: ErrNotRegular, big: ErrTooLarge} {
		_, err := Read(p, 4096)
		var e *Error
		if !errors.Is(err, want) || !errors.As(err, &e) || e.Path != p {
			t.Errorf("%s: %v, want %v naming the path", p, err, want)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent"), 4096); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
}
