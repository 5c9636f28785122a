// Package mosquittotest starts Debian's mosquitto MQTT broker for tests, on
// a free loopback port with a generated configuration. Without the broker
// the test is skipped with a message, except under CI=true, where it fails
// (CI installs mosquitto).
package mosquittotest

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bin is where Debian installs the broker.
const Bin = "/usr/sbin/mosquitto"

// Require skips tb without the broker (fails it under CI=true).
func Require(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(Bin); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is required under CI (apt-get install mosquitto): %v", Bin, err)
		}
		tb.Skipf("%s not installed (apt-get install mosquitto); skipping the real-broker test", Bin)
	}
}

// Start runs a broker whose configuration is a loopback listener followed
// by extra (configuration lines; "" is an anonymous broker) and returns its
// host:port once it accepts connections. It is stopped when the test ends.
func Start(tb testing.TB, extra string) string {
	tb.Helper()
	Require(tb)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	if extra == "" {
		extra = "allow_anonymous true\n"
	}
	conf := "listener " + port + " 127.0.0.1\npersistence false\n" + extra
	if os.Geteuid() == 0 {
		// As root mosquitto switches to its own user, which cannot read
		// files in the test's private directories.
		conf += "user root\n"
	}
	path := filepath.Join(tb.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(Bin, "-c", path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(25 * time.Millisecond)
	}
	tb.Fatalf("mosquitto did not start listening on %s: %s", addr, out.String())
	return ""
}
