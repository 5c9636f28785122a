package mavudp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/mavudp"
	"github.com/cuasd/cuasd/lifecycle"
)

// printer is a stand-in for *ingest.Publisher, which publishes to NATS.
type printer struct{}

func (printer) PublishBatch(context.Context, string, string, string, []byte, int, int64, string) (ingest.Result, error) {
	return ingest.Result{}, nil
}

func (printer) Dropped(protocol, adapter, reason string, n int) {}

func (printer) PublishFrames(ctx context.Context, adapter, protocol, sensor string, frames []ingest.Frame) (ingest.Result, error) {
	for _, f := range frames {
		fmt.Printf("%s %s/%s: % x\n", adapter, protocol, sensor, f.Data)
	}
	return ingest.Result{Accepted: len(frames)}, nil
}

// Listen for MAVLink on the ground-station port and publish every frame;
// Run returns when ctx ends.
func ExampleListenUDP() {
	u, err := mavudp.ListenUDP(mavudp.UDPConfig{Addr: "127.0.0.1:0", PerPeerSensor: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a real service cancels at shutdown
	if err := u.Run(ctx, printer{}, lifecycle.Discard); err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Stats().Datagrams)
	// Output: 0
}
