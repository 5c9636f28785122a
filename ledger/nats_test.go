package ledger

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StartNATS runs an embedded JetStream server storing in dir, with
// SyncAlways (each stored batch is fsync'ed before its ack, as production
// should run), and returns an in-process connection's JetStream context.
// Stop shuts both down; it is also registered as a cleanup.
func StartNATS(tb testing.TB, dir string) (js jetstream.JetStream, stop func()) {
	tb.Helper()
	s, err := server.NewServer(&server.Options{
		JetStream:  true,
		StoreDir:   dir,
		Port:       -1,
		NoSigs:     true,
		NoLog:      true,
		SyncAlways: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats-server did not start")
	}
	nc, err := nats.Connect("", nats.InProcessServer(s))
	if err != nil {
		tb.Fatal(err)
	}
	js, err = jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		nc.Close()
		s.Shutdown()
		s.WaitForShutdown()
	}
	tb.Cleanup(stop)
	return js, stop
}
