package mavudp

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/cuasd/cuasd/lifecycle"
)

// TestUDPSurvivesGarbage sends 1 MB of random datagrams and then valid
// frames (issue 23, also-check): the valid frames are published, the
// garbage is counted in the stats, nothing crashes.
func TestUDPSurvivesGarbage(t *testing.T) {
	v := vectors(t)
	pub := &fakePub{}
	u, err := ListenUDP(UDPConfig{Addr: "127.0.0.1:0", Sensor: "rx", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- u.Run(ctx, pub, lifecycle.Discard) }()
	c, err := net.DialUDP("udp", nil, u.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	dgram := make([]byte, 1024)
	for i := range 1024 {
		for k := range dgram {
			dgram[k] = byte(rng.Uint32())
		}
		if _, err := c.Write(dgram); err != nil {
			t.Fatal(err)
		}
		if i%32 == 31 {
			time.Sleep(time.Millisecond) // let the socket buffer drain; loopback UDP drops otherwise
		}
	}
	gpi := v["GLOBAL_POSITION_INT_v2"]
	found := func() bool {
		pub.mu.Lock()
		defer pub.mu.Unlock()
		for _, f := range pub.frames["rx"] {
			if bytes.Equal(f, gpi) {
				return true
			}
		}
		return false
	}
	// A random datagram may leave a frame header waiting for its body,
	// which swallows what follows; a sender repeats, as a telemetry link
	// does.
	for deadline := time.Now().Add(10 * time.Second); !found(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no valid frame published after the garbage; stats %+v", u.Stats())
		}
		if _, err := c.Write(gpi); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := u.Stats(); st.SkippedBytes < 256<<10 {
		t.Errorf("only %d garbage bytes counted; stats %+v", st.SkippedBytes, st)
	}
}
