package alert

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

// unplaced is a JetStream that refuses its first consumers with refusal.
type unplaced struct {
	*bus.JetStream
	refusal  error
	refusals int
}

func (u *unplaced) EnsureConsumer(ctx context.Context, stream string, cfg bus.ConsumerConfig) (*bus.Consumer, error) {
	if u.refusals > 0 {
		u.refusals--
		return nil, u.refusal
	}
	return u.JetStream.EnsureConsumer(ctx, stream, cfg)
}

// TestOpenWaitsForAFormingCluster: a sink's consumer that a forming
// cluster cannot create yet (no meta leader: 10008) is created through
// the handle's Setup once it can, as the alert stream and bucket are, and
// Open succeeds with the consumer there; a refusal no wait cures fails
// Open at the first attempt.
func TestOpenWaitsForAFormingCluster(t *testing.T) {
	c, err := Parse("f.yaml", []byte("sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: r, sinks: [h]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	ns := natstest.Start(t)
	bad := &jetstream.APIError{Code: 400, ErrorCode: 10012, Description: "consumer name in subject does not match durable name in request"}
	js := &unplaced{JetStream: ns.JetStream(), refusal: bad, refusals: 2}
	if _, _, err := Open(ctx, js, c, Options{Logger: quiet}); !errors.Is(err, bad) || js.refusals != 1 {
		t.Fatalf("a permanent refusal: err %v after %d attempts, want it after the first", err, 2-js.refusals)
	}
	js.refusal = &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	js.refusals = 2
	if _, _, err := Open(ctx, js, c, Options{Logger: quiet}); err != nil || js.refusals != 0 {
		t.Fatalf("a forming cluster: %v (%d refusals left)", err, js.refusals)
	}
	if _, err := ns.JetStream().Consumer(ctx, bus.StreamAlerts, "sink-h"); err != nil {
		t.Fatalf("the sink's consumer: %v", err)
	}
}
