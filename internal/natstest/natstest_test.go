package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
)

func TestStartWithStreams(t *testing.T) {
	s := StartWithStreams(t, bus.DefaultLimits())
	if _, err := s.JS.Stream(context.Background(), bus.StreamRaw); err != nil {
		t.Fatal(err)
	}
	// A second connection over TCP sees what the in-process one publishes.
	nc := s.Connect(t)
	sub, err := nc.SubscribeSync("cuas.track.>")
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	if err := s.Conn.Publish(bus.TrackSubject("adsb", "4CA1FA"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil || m.Subject != "cuas.track.adsb.4CA1FA" {
		t.Fatalf("got %v %v", m, err)
	}
}
