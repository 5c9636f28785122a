package ingest

import (
	"net"
	"runtime"
	"testing"
)

// TestUDPKernelDrops (issue 32, item 4): datagrams the kernel drops for a
// full receive buffer never reach cuasd, so they were counted nowhere. A
// socket with the smallest buffer, sent a thousand datagrams it does not
// read, shows the kernel's drops; a socket that read everything shows 0.
func TestUDPKernelDrops(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel UDP drops are read from /proc/net/udp (Linux)")
	}
	rx, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if d, ok := UDPKernelDrops(rx); !ok || d != 0 {
		t.Fatalf("a new socket: %d drops (ok %v)", d, ok)
	}
	_ = rx.SetReadBuffer(1) // the kernel's minimum
	tx, err := net.DialUDP("udp", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	payload := make([]byte, 1000)
	for range 1000 {
		_, _ = tx.Write(payload)
	}
	d, ok := UDPKernelDrops(rx)
	if !ok || d == 0 || d > 1000 {
		t.Fatalf("1000 datagrams into a full buffer: %d drops (ok %v), want some", d, ok)
	}
	rx.Close()
	if _, ok := UDPKernelDrops(rx); ok {
		t.Error("a closed socket still reports drops")
	}
}
