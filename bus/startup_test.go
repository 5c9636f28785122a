package bus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
)

// wire is a nats-server API error as the client receives it: the server's
// own constructor, marshalled as in an API response and read back by
// nats.go, exactly the path an answer takes.
func wire(t *testing.T, e *server.ApiError) error {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var api jetstream.APIError
	if err := json.Unmarshal(b, &api); err != nil {
		t.Fatal(err)
	}
	return &api
}

// Transient accepts what a forming or recovering cluster answers and
// nothing else: the codes and sentinels are nats-server's and nats.go's
// own, the descriptions of "no suitable peers" are selectPeerError's.
func TestTransient(t *testing.T) {
	noPeers := func(reasons string) error {
		return wire(t, server.NewJSClusterNoPeersError(errors.New("no suitable peers for placement"+reasons)))
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"no meta leader (JSClusterNotAvailErr)", wire(t, server.NewJSClusterNotAvailError()), true},
		{"not the leader (JSClusterNotLeaderErr)", wire(t, server.NewJSClusterNotLeaderError()), true},
		{"incomplete results", wire(t, server.NewJSClusterIncompleteError()), true},
		{"every peer of the stream offline", wire(t, server.NewJSStreamOfflineError()), true},
		{"too many requests", wire(t, server.NewJSStreamTooManyRequestsError()), true},
		{"member change in flight", wire(t, server.NewJSClusterServerMemberChangeInflightError()), true},
		{"no peers: peer offline", noPeers(", peer offline"), true},
		{"no peers: peer offline and storage", noPeers(", peer offline, insufficient storage"), true},
		{"no peers: none heard of yet", noPeers(""), true},
		{"no peers: miscellaneous (node info not yet in)", noPeers(", miscellaneous issue"), true},
		{"no peers: insufficient storage", noPeers(", insufficient storage"), false},
		{"no peers: tags not matched", noPeers(", tags not matched ['az:1']"), false},
		{"no peers: server tag not unique", noPeers(", server tag not unique"), false},
		{"insufficient resources (limits)", wire(t, server.NewJSInsufficientResourcesError()), false},
		{"R3 on a single server", wire(t, server.NewJSStreamReplicasNotSupportedError()), false},
		{"subjects overlap", wire(t, server.NewJSStreamSubjectOverlapError()), false},
		{"name in use with another configuration", wire(t, server.NewJSStreamNameExistError()), false},
		{"bad stream configuration", wire(t, server.NewJSStreamInvalidConfigError(errors.New("max age"))), false},
		{"account limits", wire(t, server.NewJSAccountResourcesExceededError()), false},
		{"per-attempt timeout", context.DeadlineExceeded, true},
		{"request timeout", nats.ErrTimeout, true},
		{"reconnecting", nats.ErrConnectionReconnecting, true},
		{"JetStream not enabled (no responders)", jetstream.ErrJetStreamNotEnabled, false},
		{"no responders", nats.ErrNoResponders, false},
		{"a write no stream leader answers yet", jetstream.ErrNoStreamResponse, true},
		{"JetStream not enabled for the account", jetstream.ErrJetStreamNotEnabledForAccount, false},
		{"permissions violation", nats.ErrPermissionViolation, false},
		{"connection closed", nats.ErrConnectionClosed, false},
		{"cancelled", context.Canceled, false},
		{"stream name already in use (client sentinel)", jetstream.ErrStreamNameAlreadyInUse, false},
		{"wrapped no peers", &bus.Error{Op: "stream CUAS_RAW", Err: fmt.Errorf("create: %w", noPeers(", peer offline"))}, true},
		{"wrapped overlap", &bus.Error{Op: "stream CUAS_RAW", Err: wire(t, server.NewJSStreamSubjectOverlapError())}, false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		if got := bus.Transient(c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// logBuffer is a logger writing into a buffer, and the number of retries
// it logged.
type logBuffer struct{ bytes.Buffer }

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(&b.Buffer, nil)) }
func (b *logBuffer) retries() int         { return strings.Count(b.String(), "retrying") }

// Setup.Do retries transient errors, logging each retry once with its
// error, until create succeeds; a permanent error returns at once.
func TestSetupRetriesTransientOnly(t *testing.T) {
	offline := wire(t, server.NewJSClusterNoPeersError(errors.New("no suitable peers for placement, peer offline")))
	overlap := wire(t, server.NewJSStreamSubjectOverlapError())
	cases := []struct {
		name      string
		errs      []error // what successive attempts return (then nil)
		wantCalls int
		wantErr   error
	}{
		{"succeeds at once", nil, 1, nil},
		{"forming cluster", []error{wire(t, server.NewJSClusterNotAvailError()), offline, offline}, 4, nil},
		{"permanent", []error{overlap, offline}, 1, overlap},
		{"transient then permanent", []error{offline, overlap}, 2, overlap},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs logBuffer
			s := bus.WithMinWait(bus.Setup{Log: logs.logger()}, time.Millisecond)
			calls := 0
			err := s.Do(context.Background(), "stream X", func(ctx context.Context) error {
				calls++
				if _, ok := ctx.Deadline(); !ok {
					t.Error("an attempt has no deadline of its own")
				}
				if calls <= len(c.errs) {
					return c.errs[calls-1]
				}
				return nil
			})
			if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if calls != c.wantCalls {
				t.Errorf("create called %d times, want %d", calls, c.wantCalls)
			}
			if got, want := logs.retries(), calls-1; got != want {
				t.Errorf("%d retries logged, want %d (one per retry):\n%s", got, want, logs.String())
			}
			if calls > 1 && !strings.Contains(logs.String(), "peer offline") {
				t.Errorf("the retries' log does not carry the error:\n%s", logs.String())
			}
		})
	}
}

// A cluster that never becomes able ends the retries at the time limit,
// and the error keeps the cluster's last answer; a cancelled start-up ends
// them at once.
func TestSetupGivesUp(t *testing.T) {
	offline := wire(t, server.NewJSClusterNoPeersError(errors.New("no suitable peers for placement, peer offline")))
	var logs logBuffer
	s := bus.WithMinWait(bus.Setup{Log: logs.logger(), Timeout: 50 * time.Millisecond}, time.Millisecond)
	calls := 0
	err := s.Do(context.Background(), "bucket B", func(context.Context) error { calls++; return offline })
	if !errors.Is(err, offline) || !strings.Contains(err.Error(), "did not accept it within 50ms") {
		t.Errorf("err = %v, want the limit and the last error", err)
	}
	if calls < 2 {
		t.Errorf("create called %d times before the limit, want retries", calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = bus.Setup{Log: logs.logger()}.Do(ctx, "bucket B", func(context.Context) error { calls++; cancel(); return offline })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("after cancel: err = %v after %d calls, want context.Canceled after 1", err, calls)
	}
}

// Against a real server, a permanent refusal fails the start at once:
// a single (not clustered) nats-server refuses three replicas, and
// EnsureStreams and KeyValue return that without a retry.
func TestSetupPermanentFailsAtOnce(t *testing.T) {
	var logs logBuffer
	b, err := bus.Start(context.Background(), bus.Options{DataDir: t.TempDir(), Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	l := bus.DefaultLimits()
	l.Replicas = 3
	errStreams := b.EnsureStreams(context.Background(), l)
	_, errKV := b.JetStream().KeyValue(context.Background(), bus.KVConfig{Bucket: "setup-test", Replicas: 3})
	for what, err := range map[string]error{"EnsureStreams": errStreams, "KeyValue": errKV} {
		var api *jetstream.APIError
		if !errors.As(err, &api) || bus.Transient(err) {
			t.Errorf("%s: err = %v, want the server's permanent refusal", what, err)
		}
		t.Logf("%s: %v", what, err)
	}
	if n := logs.retries(); n != 0 {
		t.Errorf("%d retries of a permanent error:\n%s", n, logs.String())
	}
}
