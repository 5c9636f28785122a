package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamName is the JetStream stream that holds the ledger of the default
// instance; StreamFor names every instance's.
const StreamName = "CUAS_LEDGER"

// StreamSubject is the only subject of StreamName; one message per batch.
const StreamSubject = "cuas.ledger.batch"

// StreamFor returns the stream and subject of an instance's ledger. A log
// has one writer, so instances sharing a JetStream cluster each get their
// own: "default" (or "") uses StreamName and StreamSubject, instance X uses
// CUAS_LEDGER_X and cuas.ledger.X.batch. Instance names hold only letters,
// digits, '_' and '-' (Open refuses others), so the name is used as it is
// and two names never share a stream.
func StreamFor(instance string) (stream, subject string) {
	if instance == "" || instance == "default" {
		return StreamName, StreamSubject
	}
	return StreamName + "_" + instance, "cuas.ledger." + instance + ".batch"
}

// Open opens (creating if needed) the ledger in the JetStream stream
// StreamFor(opts.Instance), rebuilds the Merkle tree from every stored entry, and checks
// that each stored checkpoint's root equals the rebuilt root at its size
// and that the last checkpoint's signature verifies. A log that fails
// these checks is not served (KindIntegrity).
//
// For fsync durability the JetStream server must run with SyncAlways
// (sync_interval: always); see the package documentation.
func Open(ctx context.Context, js jetstream.JetStream, opts Options) (*Log, error) {
	maxPayload := 0
	if nc := js.Conn(); nc != nil {
		maxPayload = int(nc.MaxPayload())
	}
	named, err := opts.normalize(maxPayload)
	if err != nil {
		return nil, err
	}
	priv, err := signingKey(&opts)
	if err != nil {
		return nil, err
	}
	st, err := openJetStreamStore(ctx, js, &opts)
	if err != nil {
		return nil, err
	}
	return open(ctx, st, &opts, named, priv)
}

// store is where batches become durable. Batches are numbered 1, 2, ...
// in append order with no gaps.
type store interface {
	// count is the number of batches stored.
	count() uint64
	// append stores body as batch count()+1 and returns once it is durable.
	// A non-nil error means the batch is not stored and the store is
	// unchanged, or (KindIntegrity) the store's state is unknown.
	append(ctx context.Context, body []byte, id string) error
	// get returns batch seq.
	get(ctx context.Context, seq uint64) ([]byte, error)
	// replay calls fn for each stored batch in order.
	replay(ctx context.Context, fn func(seq uint64, body []byte) error) error
}

// jsStore keeps batches in the instance's JetStream stream: file storage,
// deletes and purges denied, no limits, one message per batch. Each
// publish expects the stream's last sequence to be the one this process
// last wrote, so a second writer, or a message this process believes it
// did not write, is detected instead of interleaved.
//
// Durability is the server's: with the server option SyncAlways
// (`jetstream { sync_interval: always }`) each batch message is written
// and fsync'ed before its ack; otherwise it is written to the OS before
// the ack (safe against a killed process, not against a power cut).
type jsStore struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	name    string // stream name
	subject string
	last    uint64
	timeout time.Duration
	// acked mirrors last for readers outside the commit goroutine
	// (check).
	acked atomic.Uint64
}

func openJetStreamStore(ctx context.Context, js jetstream.JetStream, opts *Options) (*jsStore, error) {
	const op = "open"
	name, subject := StreamFor(opts.Instance)
	cfg := jetstream.StreamConfig{
		Name:        name,
		Description: "cuasd receipt ledger: DSSE-signed receipts in an RFC 6962 Merkle log, one message per group-committed batch",
		Subjects:    []string{subject},
		Retention:   jetstream.LimitsPolicy,
		MaxMsgs:     -1,
		MaxBytes:    -1,
		MaxAge:      0,
		Discard:     jetstream.DiscardNew,
		Storage:     jetstream.FileStorage,
		Replicas:    opts.Replicas,
		DenyDelete:  true,
		DenyPurge:   true,
		AllowDirect: true,
	}
	var st jetstream.Stream
	create := func(ctx context.Context) (err error) {
		st, err = js.CreateOrUpdateStream(ctx, cfg)
		return err
	}
	var err error
	if opts.Setup != nil {
		err = opts.Setup(ctx, "stream "+name, create)
	} else {
		err = create(ctx)
	}
	if err != nil {
		return nil, errf(KindStorage, op, "create stream "+name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, errf(KindStorage, op, "stream info", err)
	}
	s := info.State
	// Deletion is denied, so the stream must hold 1..LastSeq exactly.
	if s.LastSeq != s.Msgs || (s.Msgs > 0 && s.FirstSeq != 1) || s.NumDeleted != 0 {
		return nil, errf(KindIntegrity, op, fmt.Sprintf("stream %s has gaps: first %d, last %d, %d messages, %d deleted",
			name, s.FirstSeq, s.LastSeq, s.Msgs, s.NumDeleted), nil)
	}
	js2 := &jsStore{js: js, stream: st, name: name, subject: subject, last: s.LastSeq, timeout: opts.StoreTimeout}
	js2.acked.Store(s.LastSeq)
	return js2, nil
}

func (s *jsStore) count() uint64 { return s.last }

func (s *jsStore) append(ctx context.Context, body []byte, id string) error {
	const op = "append"
	pctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ack, err := s.js.Publish(pctx, s.subject, body,
		jetstream.WithExpectStream(s.name),
		jetstream.WithExpectLastSequence(s.last),
		jetstream.WithMsgID(id))
	if err == nil && !ack.Duplicate && ack.Sequence == s.last+1 {
		s.last++
		s.acked.Store(s.last)
		return nil
	}
	// The publish failed or its answer is odd: find out what the stream
	// holds now rather than guess.
	rctx, rcancel := context.WithTimeout(context.Background(), s.timeout)
	defer rcancel()
	info, ierr := s.stream.Info(rctx)
	if ierr != nil {
		return errf(KindIntegrity, op, "publish failed and the stream state is unknown", errors.Join(err, ierr))
	}
	switch info.State.LastSeq {
	case s.last:
		if err == nil {
			err = fmt.Errorf("unexpected ack: sequence %d, duplicate %v", ack.Sequence, ack.Duplicate)
		}
		return errf(KindStorage, op, "batch not stored", err)
	case s.last + 1:
		got, gerr := s.get(rctx, s.last+1)
		if gerr == nil && bytes.Equal(got, body) {
			s.last++
			s.acked.Store(s.last)
			return nil // stored after all; the ack was lost
		}
		return errf(KindIntegrity, op, "the stream holds a batch this log did not write", err)
	default:
		return errf(KindIntegrity, op, fmt.Sprintf("stream last sequence is %d, expected %d: another writer?", info.State.LastSeq, s.last), err)
	}
}

// check compares the stream with the batches this process knows were
// stored: a missing stream, or one holding fewer batches, means
// acknowledged receipts are gone (KindIntegrity). It never creates the
// stream: an empty ledger in its place would hide the loss.
func (s *jsStore) check(ctx context.Context) (uint64, error) {
	const op = "check"
	want := s.acked.Load()
	st, err := s.js.Stream(ctx, s.name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return want, errf(KindIntegrity, op, fmt.Sprintf("stream %s is missing: the %d acknowledged batches it held are gone", s.name, want), nil)
	}
	if err != nil {
		return want, errf(KindStorage, op, "stream "+s.name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return want, errf(KindStorage, op, "stream info "+s.name, err)
	}
	if t := info.State; t.LastSeq < want || t.Msgs < want || (t.Msgs > 0 && t.FirstSeq != 1) {
		return want, errf(KindIntegrity, op, fmt.Sprintf("stream %s is truncated: it holds batches %d to %d (%d messages), %d were acknowledged",
			s.name, t.FirstSeq, t.LastSeq, t.Msgs, want), nil)
	}
	return want, nil
}

func (s *jsStore) get(ctx context.Context, seq uint64) ([]byte, error) {
	m, err := s.stream.GetMsg(ctx, seq)
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, errf(KindIntegrity, "read", fmt.Sprintf("batch %d missing from %s", seq, s.name), err)
		}
		return nil, errf(KindStorage, "read", fmt.Sprintf("batch %d", seq), err)
	}
	return m.Data, nil
}

func (s *jsStore) replay(ctx context.Context, fn func(seq uint64, body []byte) error) error {
	const op = "replay"
	if s.last == 0 {
		return nil
	}
	cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return errf(KindStorage, op, "ordered consumer", err)
	}
	it, err := cons.Messages(jetstream.PullMaxBytes(32 << 20))
	if err != nil {
		return errf(KindStorage, op, "consume", err)
	}
	defer it.Stop()
	for want := uint64(1); want <= s.last; want++ {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return errf(KindStorage, op, fmt.Sprintf("read batch %d", want), err)
		}
		md, err := m.Metadata()
		if err != nil {
			return errf(KindStorage, op, "message metadata", err)
		}
		if md.Sequence.Stream != want {
			return errf(KindIntegrity, op, fmt.Sprintf("read batch %d, want %d", md.Sequence.Stream, want), nil)
		}
		if err := fn(want, m.Data()); err != nil {
			return err
		}
	}
	return nil
}
