//go:build linux

package wificap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/pcap"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/lifecycle"
)

// recorded returns the 802.11 frames of a real Remote ID beacon capture,
// each behind a minimal radiotap header (as a monitor interface delivers
// them), with the UAS id they carry.
func recorded(t *testing.T) ([][]byte, string) {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "data", "remoteid", "odid_wifi_bcn_sample.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := pcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	var f pcap.RemoteIDFrame
	id := ""
	for rd.NextRemoteID(&f) == nil {
		if o := remoteid.FrameObservation(&f.Frame, 0, ""); f.Err == nil && o.UASID != "" {
			id = o.UASID
		}
		out = append(out, append([]byte{0, 0, 8, 0, 0, 0, 0, 0}, f.Packet.Data...))
	}
	if len(out) == 0 {
		t.Fatal("no Remote ID frame in the capture")
	}
	return out, id
}

// TestRecordedStream: the packets of a recorded monitor-mode stream become
// Remote ID frames; an access point's beacon and a bad FCS do not.
func TestRecordedStream(t *testing.T) {
	pkts, _ := recorded(t)
	s := &Source{LinkType: pcap.LinkTypeRadiotap}
	for i, p := range pkts {
		if _, ok := s.Frame(p); !ok {
			t.Fatalf("packet %d not taken", i)
		}
	}
	ap := append([]byte{0, 0, 8, 0, 0, 0, 0, 0, 0x80, 0}, make([]byte, 60)...) // a beacon without Remote ID
	if _, ok := s.Frame(ap); ok {
		t.Error("an access point's beacon was taken")
	}
	fcs := append([]byte{0, 0, 9, 0, 2, 0, 0, 0, 0x10}, pkts[0][8:]...) // flags: FCS present
	fcs = append(fcs, 1, 2, 3, 4)                                       // and wrong
	if _, ok := s.Frame(fcs); ok {
		t.Error("a frame with a bad FCS was taken")
	}
}

// TestAFPacketLoopback drives the real AF_PACKET path: no monitor
// interface exists here (no mac80211_hwsim), so the source is bound to
// the loopback interface with radiotap framing forced, and the recorded
// frames are injected on it through a second packet socket. Needs root
// (CAP_NET_RAW); skipped without.
func TestAFPacketLoopback(t *testing.T) {
	pkts, id := recorded(t)
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no loopback interface")
	}
	reg := sensors.NewRegistry(time.Hour)
	s, err := openOn(lo, pcap.LinkTypeRadiotap, sensors.Spec{Sensor: "wifi-test"}, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		sensorstest.Missing(t, "cannot open a packet socket (root or CAP_NET_RAW needed): "+err.Error())
	}
	tx, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(tx)
	to := &unix.SockaddrLinklayer{Ifindex: lo.Index, Protocol: htons(unix.ETH_P_ALL)}
	sink := sensorstest.NewSink()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, sink, lifecycle.NewStatus(nil).Reporter("wifi", lifecycle.Input)) }()
	got := func() bool {
		for _, p := range sink.Frames() {
			for _, o := range p.Obs {
				if o.UASID == id && p.Sensor == "wifi-test" && p.Protocol == "remoteid" {
					return true
				}
			}
		}
		return false
	}
	for !got() && ctx.Err() == nil {
		for _, p := range pkts {
			if err := unix.Sendto(tx, p, 0, to); err != nil {
				t.Fatal(err)
			}
		}
		wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		sink.Wait(wctx, got)
		wcancel()
	}
	if !got() {
		t.Fatalf("UAS %q never published; %d frames", id, len(sink.Frames()))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sn, _ := reg.Get("wifi-test"); sn.Messages == 0 {
		t.Errorf("registry %+v", sn)
	}
}

// TestOpenRefusesNonMonitor: an interface that is not 802.11 is refused
// with what to do.
func TestOpenRefusesNonMonitor(t *testing.T) {
	_, err := Open("lo", nil, slog.Default())
	if err == nil || !strings.Contains(err.Error(), "monitor") {
		t.Fatalf("%v", err)
	}
	if _, err := Open("no-such-if0", nil, slog.Default()); err == nil {
		t.Fatal("a missing interface was accepted")
	}
}

// FuzzFrame: no captured packet panics the filter, and what it takes is
// a Remote ID carrier the decoder recognises.
func FuzzFrame(f *testing.F) {
	f.Add([]byte{0, 0, 8, 0, 0, 0, 0, 0, 0x80, 0})
	f.Add([]byte{0, 0, 9, 0, 2, 0, 0, 0, 0x10, 0xd0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, lt := range []int{pcap.LinkTypeRadiotap, pcap.LinkTypeIEEE80211} {
			s := &Source{LinkType: lt}
			fr, ok := s.Frame(b)
			if !ok {
				continue
			}
			var rf remoteid.Frame
			if err := remoteid.DecodeWiFi(fr.Data, &rf); errors.Is(err, remoteid.ErrNotRemoteID) {
				t.Fatalf("took a frame that is not Remote ID: % x", b)
			}
		}
	})
}
