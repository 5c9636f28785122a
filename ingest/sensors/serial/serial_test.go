package serial_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/ingest/sensors/serial"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/lifecycle"
)

// pty opens a pseudo-terminal pair: the master the test writes to, the
// slave's path the source opens as its serial device.
func pty(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		sensorstest.Missing(t, "no pseudo-terminals: "+err.Error())
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestPseudoTerminal plays an ESP32 scanner on a pseudo-terminal: boot
// noise, the shared sample, an oversized line, bad values, then a good
// line again, which must still arrive.
func TestPseudoTerminal(t *testing.T) {
	sample, err := os.ReadFile(testshared.Path(t, "data", "sensors", "esp32.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	master, slave := pty(t)
	reg := sensors.NewRegistry(time.Hour)
	src, err := serial.Parse(slave+":115200?sensor=esp-1&lat=51.47&lon=-0.45", reg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	sink := sensorstest.NewSink()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, sink, lifecycle.NewStatus(nil).Reporter("serial", lifecycle.Input)) }()
	input := "ets Jun  8 2016 00:22:57 rst:0x1 (POWERON_RESET)\n" + string(bytes.TrimSpace(sample)) + "\n" +
		`{"id": "` + strings.Repeat("B", 70<<10) + "\"}\n" +
		`{"id": "BAD", "lat": 51, "lon": 0, "speed": "fast"}` + "\n" +
		`{"id": "AFTER1", "lat": 51.4, "lon": -0.4}` + "\n"
	all := func() bool {
		seen := map[string]bool{}
		for _, p := range sink.Frames() {
			for _, o := range p.Obs {
				seen[o.Key] = p.Sensor == "esp-1" && p.Adapter == "serial"
			}
		}
		d := sink.Drops()
		return seen["ESP32EXAMPLE0004"] && seen["AFTER1"] && d["remoteid/rejected_oversized"] > 0 &&
			d["remoteid/rejected_type"] > 0 && d["remoteid/rejected_invalid_json"] > 0
	}
	// Until the source has put the terminal in raw mode, the line
	// discipline may swallow input: write again until everything arrived.
	for !all() && ctx.Err() == nil {
		if _, err := master.WriteString(input); err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(ctx, time.Second)
		sink.Wait(wctx, all)
		wcancel()
	}
	if !all() {
		t.Fatalf("drops %v, %d frames", sink.Drops(), len(sink.Frames()))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s, _ := reg.Get("esp-1")
	if s.Kind != "serial" || s.Position == nil || s.Position.Source != "configured" || s.Position.Lat != 51.47 {
		t.Errorf("registry %+v", s)
	}
}

// TestMissingDevice: a device that is not there is retried, reported as
// retrying, and Run still ends with its context.
func TestMissingDevice(t *testing.T) {
	src, err := serial.Parse("/dev/does-not-exist-cuasd", nil, quiet())
	if err != nil {
		t.Fatal(err)
	}
	st := lifecycle.NewStatus(nil)
	rep := sensorstest.NewReporter(st.Reporter("serial", lifecycle.Input), 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, sensorstest.NewSink(), rep) }()
	if err := <-rep.Retried; err == nil || !strings.Contains(err.Error(), "does-not-exist") {
		t.Errorf("retrying with %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		spec, path, sensor string
		baud               int
		ok                 bool
	}{
		{"/dev/ttyUSB0", "/dev/ttyUSB0", "serial-ttyUSB0", 115200, true},
		{"/dev/ttyACM1:921600", "/dev/ttyACM1", "serial-ttyACM1", 921600, true},
		{"/dev/serial/by-path/pci-0000:00:14.0-usb-0:2:1.0-port0", "/dev/serial/by-path/pci-0000:00:14.0-usb-0:2:1.0-port0", "serial-pci-0000_00_14_0-usb-0_2_1_0-port0", 115200, true},
		{"/dev/ttyUSB0:0", "", "", 0, false},
		{"/dev/ttyUSB0?sensor=esp", "/dev/ttyUSB0", "esp", 115200, true},
		{":9600", "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			s, err := serial.Parse(tc.spec, nil, quiet())
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if tc.ok && (s.Path != tc.path || s.Baud != tc.baud || s.Sensor != tc.sensor) {
				t.Errorf("%+v", s)
			}
		})
	}
}
