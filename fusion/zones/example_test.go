package zones_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
)

// Open seeds the bucket from configuration; the pipeline then reads the
// lock-free Snapshot on every track update.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "cuasd-zones-example-")
	defer os.RemoveAll(dir)
	ns, _ := server.NewServer(&server.Options{JetStream: true, StoreDir: dir, Port: -1, NoSigs: true})
	go ns.Start()
	defer ns.Shutdown()
	ns.ReadyForConnections(10 * time.Second)
	nc, _ := nats.Connect("", nats.InProcessServer(ns))
	defer nc.Close()
	js, _ := jetstream.New(nc)

	ctx := context.Background()
	cfg := zones.Config{Geofences: []gate.Geofence{
		{ID: "egll", Class: gate.ClassAirport, Center: []float64{51.47, -0.4543}, RadiusM: 5000},
	}}
	kv, err := bus.NewJetStream(js).KeyValue(ctx, zones.BucketConfig(cfg))
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := zones.Open(ctx, kv, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	snap := store.Snapshot()
	for _, g := range snap.Geofences {
		r := gate.Evaluate(gate.Input{Lat: 51.48, Lon: -0.45}, g, gate.Policy{})
		fmt.Printf("%s: breach %v, decision %s\n", g.ID, r.Breach, r.Decision)
	}
	// Output:
	// egll: breach true, decision alert
}
