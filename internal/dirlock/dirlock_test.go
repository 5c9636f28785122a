package dirlock

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestHelperHold is run as a child process by TestSecondProcessIsRefused:
// it takes the lock and waits to be killed.
func TestHelperHold(t *testing.T) {
	dir := os.Getenv("DIRLOCK_HOLD")
	if dir == "" {
		t.Skip("helper process only")
	}
	if _, err := Acquire(dir); err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString("locked\n")
	select {}
}

func TestSecondProcessIsRefused(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
	cmd.Env = append(os.Environ(), "DIRLOCK_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	_, err = Acquire(dir)
	var le *Error
	if !errors.As(err, &le) || le.HolderPID != cmd.Process.Pid || !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("second lock: %v, want an error naming pid %d", err, cmd.Process.Pid)
	}
	// A killed holder leaves no stale lock.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestSameProcessTwice(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	// flock locks belong to the open file: a second open in this process
	// is refused too, as a second cuasd run in-process (tests) must be.
	if _, err := Acquire(dir); err == nil {
		t.Fatal("second Acquire in the same process succeeded")
	}
}
