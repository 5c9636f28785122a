package adsb

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/testshared"
)

// TestThroughputCPUTime measures decode throughput per core as thread CPU
// time (getrusage RUSAGE_THREAD), which, unlike the wall clock of a
// benchmark, is not inflated when other processes share the cores. It
// asserts nothing and runs only with ADSB_THROUGHPUT=1:
//
//	ADSB_THROUGHPUT=1 go test -run ThroughputCPUTime -v ./decode/adsb
func TestThroughputCPUTime(t *testing.T) {
	if os.Getenv("ADSB_THROUGHPUT") != "1" {
		t.Skip("set ADSB_THROUGHPUT=1 to measure")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var capture [][]byte
	if raw, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin")); err == nil {
		for f, err := range BeastFrames(raw) {
			if err == nil && f.Type != BeastModeAC {
				capture = append(capture, append([]byte(nil), f.Bytes()...))
			}
		}
	}
	var m Message
	var bf BeastFrame
	var af AVRFrame
	rec := [][]byte{AppendBeast(nil, &BeastFrame{Type: BeastModeSLong, Len: 14, Timestamp: 0x030bf18cc2ab, Signal: 0x13, Data: [14]byte(df17Mix[0])})}
	avr := [][]byte{[]byte("@030BF18CC2AB8D406B902015A678D4D220AA4BDA;")}
	pair := [][]byte{nil}
	even, odd := CPR{Lat: 93000, Lon: 51372}, CPR{Lat: 74158, Lon: 50194, Odd: true}
	for _, c := range []struct {
		name   string
		frames [][]byte
		f      func([]byte)
	}{
		{"CRC (Syndrome) of the DF17 mix", df17Mix, func(b []byte) { _ = Syndrome(b) }},
		{"Decode (CRC + full decode) of the DF17 mix", df17Mix, func(b []byte) { _ = Decode(b, &m) }},
		{"Decode of every Mode S frame of the Beast capture", capture, func(b []byte) { _ = Decode(b, &m) }},
		{"CPRGlobalAirborne of one pair", pair, func([]byte) { _, _, _ = CPRGlobalAirborne(even, odd, false) }},
		{"CPRLocalAirborne of one report", pair, func([]byte) { _, _, _ = CPRLocalAirborne(even, 52.258, 3.918) }},
		{"ParseBeast of one long record", rec, func(b []byte) { _, _ = ParseBeast(b, &bf) }},
		{"ParseAVR of one @-timestamped line", avr, func(b []byte) { _ = ParseAVR(b, &af) }},
	} {
		if len(c.frames) == 0 {
			continue
		}
		const n = 20_000_000
		cpu0, wall0 := threadCPU(t), time.Now()
		k := 0
		for range n {
			c.f(c.frames[k])
			k++
			if k == len(c.frames) {
				k = 0
			}
		}
		cpu, wall := threadCPU(t)-cpu0, time.Since(wall0)
		t.Logf("%s: %.1f ns/frame CPU (%.1f M frames/s per core), %.1f ns/frame wall",
			c.name, float64(cpu.Nanoseconds())/n, n/cpu.Seconds()/1e6, float64(wall.Nanoseconds())/n)
	}
}

func threadCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
