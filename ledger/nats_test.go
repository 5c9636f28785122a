package ledger

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/internal/natstest"
)

// StartNATS runs an embedded JetStream server storing in dir, with
// SyncAlways (each stored batch is fsync'ed before its ack, as production
// should run), and returns an in-process connection's JetStream context.
// Stop shuts both down; it is also registered as a cleanup.
func StartNATS(tb testing.TB, dir string) (js jetstream.JetStream, stop func()) {
	tb.Helper()
	s := natstest.Start(tb, natstest.InDir(dir), natstest.SyncAlways())
	return s.JS, s.Stop
}
