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
	for _, c := range []struct {
		name   string
		frames [][]byte
		f      func([]byte)
	}{
		{"CRC (Syndrome) of the DF17 mix", df17Mix, func(b []byte) { _ = Syndrome(b) }},
		{"Decode (CRC + full decode) of the DF17 mix", df17Mix, func(b []byte) { _ = Decode(b, &m) }},
		{"Decode of every Mode S frame of the Beast capture", capture, func(b []byte) { _ = Decode(b, &m) }},
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
