package mavudp

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/lifecycle"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakePub records what would be published.
type fakePub struct {
	mu      sync.Mutex
	frames  map[string][][]byte // by sensor
	byLink  map[string][][]byte // by Link metadata
	sensors map[string]string   // link → sensor
	recv    []int64
	fail    bool
	dropped map[string]int
}

// PublishBatch implements ingest.Sink; the MAVLink adapters publish frame
// by frame, never in lp batches.
func (f *fakePub) PublishBatch(context.Context, string, string, string, []byte, int, int64, string) (ingest.Result, error) {
	panic("the MAVLink adapters do not publish batches")
}

func (f *fakePub) PublishFrames(ctx context.Context, adapter, protocol, sensor string, frames []ingest.Frame) (ingest.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if protocol != Protocol {
		panic("protocol " + protocol)
	}
	if f.fail {
		return ingest.Result{}, errors.New("bus down")
	}
	if f.frames == nil {
		f.frames, f.byLink, f.sensors = map[string][][]byte{}, map[string][][]byte{}, map[string]string{}
	}
	for _, fr := range frames {
		f.frames[sensor] = append(f.frames[sensor], append([]byte(nil), fr.Data...))
		f.byLink[fr.Link] = append(f.byLink[fr.Link], fr.Data)
		f.sensors[fr.Link] = sensor
		f.recv = append(f.recv, fr.RecvUnixNano)
	}
	return ingest.Result{Accepted: len(frames)}, nil
}

func (f *fakePub) Dropped(protocol, adapter, reason string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropped == nil {
		f.dropped = map[string]int{}
	}
	f.dropped[reason] += n
}

func (f *fakePub) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.frames {
		n += len(v)
	}
	return n
}

// vectors returns frames of the MAVLink C library vectors by id.
func vectors(t *testing.T) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile("../../decode/mavlink/testdata/mavlink.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		ID  string `json:"id"`
		Hex string `json:"hex"`
	}
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, v := range vs {
		m[v.ID], _ = hex.DecodeString(v.Hex)
	}
	return m
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestUDP(t *testing.T) {
	v := vectors(t)
	pub := &fakePub{}
	u, err := ListenUDP(UDPConfig{Addr: "127.0.0.1:0", Sensor: "rx", PerPeerSensor: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- u.Run(ctx, pub, lifecycle.Discard) }()

	send := func(c *net.UDPConn, b []byte) {
		t.Helper()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	a, err := net.DialUDP("udp", nil, u.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := net.DialUDP("udp", nil, u.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	hb, gpi, sig := v["HEARTBEAT_v1"], v["GLOBAL_POSITION_INT_v2"], v["HEARTBEAT_v2_signed"]
	// Peer a: two frames in one datagram, garbage, then a frame split
	// across two datagrams, interleaved with peer b's traffic.
	send(a, append(append(append([]byte{}, hb...), 0x00, 0x42), gpi...))
	send(a, sig[:11])
	send(b, append(append([]byte{}, v["bad_crc_v1_heartbeat"]...), gpi...))
	send(a, sig[11:])
	waitFor(t, "4 frames", func() bool { return pub.count() == 4 })

	// Both peers are on 127.0.0.1: one sensor, two links (each with its
	// own stream reassembly).
	la, lb := a.LocalAddr().String(), b.LocalAddr().String()
	pub.mu.Lock()
	gotA, gotB := pub.byLink[la], pub.byLink[lb]
	sensorA, sensorB := pub.sensors[la], pub.sensors[lb]
	pub.mu.Unlock()
	if len(gotA) != 3 || !bytes.Equal(gotA[0], hb) || !bytes.Equal(gotA[1], gpi) || !bytes.Equal(gotA[2], sig) {
		t.Errorf("peer a (%s): %x", la, gotA)
	}
	if len(gotB) != 1 || !bytes.Equal(gotB[0], gpi) {
		t.Errorf("peer b (%s): %x", lb, gotB)
	}
	if sensorA != "rx-127-0-0-1" || sensorB != sensorA {
		t.Errorf("sensors %q and %q, want both rx-127-0-0-1", sensorA, sensorB)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := u.Stats()
	if st.Datagrams != 4 || st.Frames != 4 || st.Published != 4 || st.BadCRC != 1 || st.SkippedBytes != 2+17 || st.Peers != 2 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, r := range pub.recv {
		if r == 0 {
			t.Error("no receive time")
		}
	}
}

// A vehicle whose link reconnects (a new UDP source port) keeps its
// identity: the sensor, and so the track key sysid-compid@sensor, does not
// include the port; the address is metadata (issue 24, item 3).
func TestUDPReconnectKeepsIdentity(t *testing.T) {
	v := vectors(t)
	pub := &fakePub{}
	u, err := ListenUDP(UDPConfig{Addr: "127.0.0.1:0", Sensor: "rx", PerPeerSensor: true, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- u.Run(ctx, pub, lifecycle.Discard) }()
	var links []string
	for i := range 2 {
		c, err := net.DialUDP("udp", nil, u.Addr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, c.LocalAddr().String())
		if _, err := c.Write(v["HEARTBEAT_v1"]); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the heartbeat", func() bool { return pub.count() == i+1 })
		c.Close()
	}
	cancel()
	<-done
	if links[0] == links[1] {
		t.Fatalf("the two connections share the address %s", links[0])
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if len(pub.frames) != 1 || len(pub.frames["rx-127-0-0-1"]) != 2 {
		t.Errorf("sensors %v, want both heartbeats under rx-127-0-0-1", keysOf(pub.frames))
	}
	for _, l := range links {
		if len(pub.byLink[l]) != 1 {
			t.Errorf("link %s: %d frames carry it as metadata, want 1", l, len(pub.byLink[l]))
		}
	}
}

func keysOf(m map[string][][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestUDPPeerLimitAndPublishFailure(t *testing.T) {
	v := vectors(t)
	pub := &fakePub{fail: true}
	u, err := ListenUDP(UDPConfig{Addr: "127.0.0.1:0", MaxPeers: 1, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- u.Run(ctx, pub, lifecycle.Discard) }()
	for range 3 {
		c, err := net.DialUDP("udp", nil, u.Addr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		c.Write(v["HEARTBEAT_v1"])
		c.Close()
	}
	waitFor(t, "3 drops", func() bool { return u.Stats().Dropped == 3 })
	cancel()
	<-done
	st := u.Stats()
	if st.Peers != 1 || st.PeersEvicted != 2 || st.Published != 0 || pub.dropped["publish"] != 3 {
		t.Errorf("stats %+v, dropped %v", st, pub.dropped)
	}
}

func TestTCP(t *testing.T) {
	v := vectors(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stream := bytes.Join([][]byte{v["HEARTBEAT_v1"], {0xFE, 0x01}, v["SYS_STATUS_v2"], v["OPEN_DRONE_ID_LOCATION_v2"]}, nil)
	// Serve the stream twice, in 7-byte writes, closing in between: the
	// client must reconnect and reassemble.
	go func() {
		for range 2 {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			for i := 0; i < len(stream); i += 7 {
				c.Write(stream[i:min(i+7, len(stream))])
				time.Sleep(time.Millisecond)
			}
			c.Close()
		}
	}()
	pub := &fakePub{}
	cl, err := NewTCP(TCPConfig{Addr: ln.Addr().String(), MinBackoff: 10 * time.Millisecond, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cl.Run(ctx, pub, lifecycle.Discard) }()
	waitFor(t, "6 frames", func() bool { return pub.count() == 6 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sensor := peerSensor("mavlink-tcp", ln.Addr().String())
	got := pub.frames[sensor]
	for i, want := range [][]byte{v["HEARTBEAT_v1"], v["SYS_STATUS_v2"], v["OPEN_DRONE_ID_LOCATION_v2"]} {
		if !bytes.Equal(got[i], want) || !bytes.Equal(got[i+3], want) {
			t.Errorf("frame %d differs", i)
		}
	}
	if st := cl.Stats(); st.Connects < 2 || st.Published != 6 || st.SkippedBytes != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := ListenUDP(UDPConfig{Addr: "nonsense:addr:x"}); err == nil {
		t.Error("bad address accepted")
	}
	if _, err := NewTCP(TCPConfig{}); err == nil {
		t.Error("no address accepted")
	}
	if s := peerSensor("rx", "[::1]:14550"); s != "rx----1--14550" {
		t.Errorf("peerSensor %q", s)
	}
}
