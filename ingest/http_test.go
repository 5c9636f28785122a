package ingest

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
)

// HTTP ingest reaches the Publisher only while its input runs: refused
// before Run and after it ends, stored in CUAS_RAW while it runs.
func TestHTTPPublishesOnlyWhileRunning(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	pub := NewPublisher(bus.NewJetStream(js), nil)
	in := NewHTTP()
	raw, _ := hex.DecodeString("8D406B902015A678D4D220AA4BDA")
	frames := []Frame{{Data: raw, RecvUnixNano: time.Now().UnixNano()}}
	if _, err := in.PublishFrames(t.Context(), "http", "adsb", "rx1", frames); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("before Run: %v, want ErrNotRunning", err)
	}
	ctx, stop := context.WithCancel(t.Context())
	up := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx, pub, upReporter(up)) }()
	<-up
	res, err := in.PublishFrames(t.Context(), "http", "adsb", "rx1", frames)
	if err != nil || res.Accepted != 1 {
		t.Fatalf("while running: %+v %v", res, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := in.PublishFrames(t.Context(), "http", "adsb", "rx1", frames); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("after Run: %v, want ErrNotRunning", err)
	}
	st, err := js.Stream(t.Context(), bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(t.Context()); err != nil || info.State.Msgs != 1 {
		t.Fatalf("CUAS_RAW: %v, %+v", err, info)
	}
	if in.Name() != "http" {
		t.Errorf("name %q", in.Name())
	}
}

// upReporter closes up when the source reports Up.
type upReporter chan struct{}

func (u upReporter) Up()            { close(u) }
func (u upReporter) Retrying(error) {}

var _ lifecycle.Reporter = upReporter(nil)
