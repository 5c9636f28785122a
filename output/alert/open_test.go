package alert

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

// unplaced is a JetStream whose first refusals of a consumer are what a
// cluster still electing its meta leader answers (10008), as cuasd meets
// it when it starts against a forming cluster.
type unplaced struct {
	*bus.JetStream
	refusals int
}

func (u *unplaced) EnsureConsumer(ctx context.Context, stream string, cfg bus.ConsumerConfig) (*bus.Consumer, error) {
	if u.refusals > 0 {
		u.refusals--
		return nil, &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	}
	return u.JetStream.EnsureConsumer(ctx, stream, cfg)
}

// TestOpenWaitsForAFormingCluster: with Options.Setup (cuasd passes
// bus.Setup.Do) a sink's consumer that a forming cluster cannot create
// yet is created once it can, and Open succeeds with the consumer there;
// without it, the first refusal fails Open, as before.
func TestOpenWaitsForAFormingCluster(t *testing.T) {
	c, err := Parse("f.yaml", []byte("sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: r, sinks: [h]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	ns := natstest.Start(t)
	js := &unplaced{JetStream: ns.JetStream(), refusals: 2}
	if _, _, err := Open(ctx, js, c, Options{Logger: quiet}); err == nil || js.refusals != 1 {
		t.Fatalf("without Setup: err %v after %d refusals, want the first refusal", err, 2-js.refusals)
	}
	js.refusals = 2
	setup := bus.Setup{Timeout: 30 * time.Second, Log: quiet}
	if _, _, err := Open(ctx, js, c, Options{Logger: quiet, Setup: setup.Do}); err != nil || js.refusals != 0 {
		t.Fatalf("with Setup: %v (%d refusals left)", err, js.refusals)
	}
	if _, err := ns.JetStream().Consumer(ctx, bus.StreamAlerts, "sink-h"); err != nil {
		t.Fatalf("the sink's consumer: %v", err)
	}
}
