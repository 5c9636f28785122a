package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/lifecycle"
)

// DefaultSetupTimeout is how long Setup retries one stream or bucket by
// default (cuasd serve --js-start-timeout).
const DefaultSetupTimeout = 2 * time.Minute

// setupAttempt bounds one attempt: a cluster without a meta leader does
// not answer a JetStream API request at all for its first 10 s (then it
// answers "JetStream system temporarily unavailable").
const setupAttempt = 5 * time.Second

// The nats-server error codes (server/errors.json) that a forming or
// recovering JetStream cluster answers and a later attempt may not.
const (
	codeClusterIncomplete  jetstream.ErrorCode = 10004 // incomplete results
	codeClusterNoPeers     jetstream.ErrorCode = 10005 // no suitable peers for placement, ...
	codeClusterNotAvail    jetstream.ErrorCode = 10008 // JetStream system temporarily unavailable (no meta leader)
	codeClusterNotLeader   jetstream.ErrorCode = 10009 // JetStream cluster can not handle request
	codeStreamOffline      jetstream.ErrorCode = 10118 // stream is offline (every peer of the stream offline)
	codeTooManyRequests    jetstream.ErrorCode = 10167 // too many requests
	codeMemberChangeFlight jetstream.ErrorCode = 10202 // cluster member change is in progress
)

// Transient reports whether err, from creating or updating a stream, a
// bucket or a consumer, is one a forming or recovering JetStream cluster
// gives and a later attempt may not: no meta leader yet, peers not yet
// heard from ("no suitable peers for placement, peer offline"), a
// stream whose peers are all offline, a request that timed out, a
// connection that is reconnecting, or a write to a stream just created
// that no leader answers yet ("no response from stream": a replicated
// bucket's first write while its group elects one; a stream that does
// not exist at all gives it too, and is retried until Setup's time
// limit). Everything else is permanent: a bad
// or conflicting configuration, missing permissions, JetStream not
// enabled (no responders), and "insufficient resources" (10023), which
// nats-server answers for exceeded server, account and HA-asset limits:
// an operator's setting, not a passing state. "No suitable peers" is
// permanent too when it names only reasons of configuration
// (insufficient storage, placement tags).
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, jetstream.ErrNoStreamResponse) {
		return true
	}
	var api *jetstream.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode {
	case codeClusterIncomplete, codeClusterNotAvail, codeClusterNotLeader, codeStreamOffline,
		codeTooManyRequests, codeMemberChangeFlight:
		return true
	case codeClusterNoPeers:
		return noPeersTransient(api.Description)
	}
	return false
}

// noPeersTransient judges a "no suitable peers for placement" by the
// reasons nats-server lists after it (selectPeerError): offline peers and
// peers the meta leader has not heard from yet pass; a shortage of
// storage or unmatched placement tags last until an operator acts.
func noPeersTransient(desc string) bool {
	if strings.Contains(desc, "peer offline") {
		return true
	}
	return !strings.Contains(desc, "insufficient storage") && !strings.Contains(desc, "tag")
}

// Setup creates JetStream streams and buckets at start-up: against a
// cluster that is still forming or recovering it retries what Transient
// accepts, with back-off, and fails at once on anything else.
type Setup struct {
	// Timeout bounds the retries of one stream or bucket
	// (DefaultSetupTimeout when 0).
	Timeout time.Duration
	// Log receives one warning per retry (slog.Default() when nil).
	Log *slog.Logger
	// minWait is the first back-off (250 ms when 0; tests shorten it).
	minWait time.Duration
}

// Do runs create, which makes the stream or bucket named by what, until
// it succeeds, fails with an error that is not Transient, ctx ends or
// s.Timeout has passed. Each attempt gets its own deadline; each retry is
// logged once as a warning with its error. The wait between attempts
// doubles from 250 ms to 5 s, as lifecycle.Retry's does.
func (s Setup) Do(ctx context.Context, what string, create func(ctx context.Context) error) error {
	limit := cmp.Or(max(s.Timeout, 0), DefaultSetupTimeout)
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	dctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	b := lifecycle.Backoff{Min: cmp.Or(s.minWait, 250*time.Millisecond), Max: 5 * time.Second}
	for attempt := 1; ; attempt++ {
		actx, acancel := context.WithTimeout(dctx, setupAttempt)
		err := create(actx)
		timedOut := actx.Err() != nil
		acancel()
		switch {
		case err == nil:
			if attempt > 1 {
				log.Info("JetStream placed it after retries", "what", what, "attempts", attempt)
			}
			return nil
		case dctx.Err() != nil:
			return gaveUp(ctx, limit, attempt, err)
		case !timedOut && !Transient(err):
			return err
		}
		log.Warn("JetStream cannot create it yet (cluster forming or recovering?); retrying",
			"what", what, "attempt", attempt, "err", err)
		if !b.Sleep(dctx) {
			return gaveUp(ctx, limit, attempt, err)
		}
	}
}

// gaveUp is the error of Do when ctx or the time limit ended the
// retries: it keeps the last error, which says what the cluster lacked.
func gaveUp(ctx context.Context, limit time.Duration, attempts int, last error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w while waiting for the JetStream cluster (last error: %v)", err, last)
	}
	return fmt.Errorf("the JetStream cluster did not accept it within %v (%d attempts; are all its servers up, "+
		"and at least as many as --replicas?): %w", limit, attempts, last)
}
