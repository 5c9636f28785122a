package ledger

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"golang.org/x/mod/sumdb/note"
)

// UnsignedKeyID is the keyid of the placeholder signature that envelopes
// carry in --unsigned mode; its sig is empty. Verifiers reject it.
const UnsignedKeyID = "unsigned-placeholder"

// Signing modes, as SigningMode reports them (and /v1/honest states them).
const (
	ModeEd25519  = "ed25519"
	ModeUnsigned = "unsigned"
)

// Options configure Open.
type Options struct {
	// Instance names this log; its origin (checkpoint first line and
	// signed-note key name) is "cuasd/<Instance>" and its stream
	// StreamFor(Instance). 1-64 letters, digits, '_' and '-' only ('.'
	// cannot be part of a stream name). Empty: the stream is
	// StreamFor("default") and the origin is unique to the log, derived
	// from the signing key ("cuasd/k-<first 16 hex digits of its key id>";
	// random for an unsigned log), so that two deployments never share
	// an origin by default. The origin is fixed when the log is created: a
	// log reopened under another instance name or key keeps its own.
	Instance string
	// DataDir receives the generated signing key when SigningKeyFile is
	// empty (created at first start with mode 0600, reused afterwards).
	DataDir string
	// SigningKeyFile is an Ed25519 private key in PKCS#8 PEM
	// (--signing-key).
	SigningKeyFile string
	// Unsigned keeps the interface contract's placeholder (docs/INTERFACE.md): envelopes carry an empty
	// signature with keyid UnsignedKeyID and checkpoints are unsigned. The
	// Merkle log is as real as in signed mode.
	Unsigned bool
	// Logger receives open/replay notes and storage errors. Nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxBatchEntries bounds one group commit. Default 4096.
	MaxBatchEntries int
	// MaxBatchBytes bounds one stored batch. Default 4 MiB; never more
	// than the NATS connection's max payload less 64 KiB of headroom.
	MaxBatchBytes int
	// StoreTimeout bounds one durable write. Default 10 s.
	StoreTimeout time.Duration
	// Replicas is the stream's replica count in a JetStream cluster
	// (default 1). With more than one, an ack means a quorum stored the
	// batch.
	Replicas int
	// Registerer receives cuasd_ledger_appends_total{outcome} (stored,
	// failed), both series present from the start; nil: unregistered.
	Registerer prometheus.Registerer
	// Setup, when set, runs the creation of the stream: cuasd passes
	// bus.Setup.Do, which retries while a JetStream cluster is still
	// forming or recovering. Nil tries once.
	Setup func(ctx context.Context, what string, create func(context.Context) error) error
}

// Log is the receipt ledger: an append-only RFC 6962 Merkle log of
// DSSE-signed in-toto statements, stored durably in JetStream, with a
// signed checkpoint per group commit. It is safe for concurrent use.
type Log struct {
	origin     string
	derived    bool            // origin derived (no instance named): a stored one wins silently
	signer     *envelopeSigner // nil in unsigned mode
	dsse       *dsse.EnvelopeSigner
	store      store
	logger     *slog.Logger
	maxEntries int
	maxBytes   int
	startTime  time.Time

	reqs      chan *appendReq
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.RWMutex
	tree    *tree // may hold tentative leaves beyond size while a batch is in flight
	size    uint64
	cp      Checkpoint
	batches []uint64 // first index of batch seq i+1
	keys    []keyUse
	failed  error // set when the store's state is unknown: appends stop

	cache batchCache

	appends         *prometheus.CounterVec // by outcome: stored, failed
	stored, failedN prometheus.Counter     // its two series, looked up once (no allocation per append)

	// marker records the stored batch count in the data directory
	// (CheckStore); marked is the count last written.
	marker string
	marked atomic.Uint64
}

// keyUse is a KeyInfo and the time of the last entry the key signed.
type keyUse struct {
	info     KeyInfo
	lastTime int64
}

type appendReq struct {
	env     dsse.Envelope
	envJSON []byte
	done    chan appendResult
}

type appendResult struct {
	r   Receipt
	err error
}

// normalize fills opts' defaults and checks them; maxPayload is the NATS
// connection's max payload (0: unknown). named reports whether an
// instance was named (else the origin is derived from the key).
func (opts *Options) normalize(maxPayload int) (named bool, err error) {
	const op = "open"
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	named = opts.Instance != ""
	if !named {
		opts.Instance = "default"
	}
	if !validInstance(opts.Instance) {
		return named, errf(KindInvalid, op, fmt.Sprintf("instance name %q: use 1-64 letters, digits, '_' and '-' (a '.' cannot be part of a stream name)", opts.Instance), nil)
	}
	if opts.StoreTimeout <= 0 {
		opts.StoreTimeout = 10 * time.Second
	}
	if opts.MaxBatchEntries <= 0 {
		opts.MaxBatchEntries = 4096
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = 4 << 20
	}
	// A batch is one message: it must fit the server's max_payload, with
	// room for the headers.
	if maxPayload > 0 {
		opts.MaxBatchBytes = min(opts.MaxBatchBytes, maxPayload-64<<10)
	}
	// One maximal envelope (a 64 KiB record, base64'd, plus the statement
	// and signature) must fit in a batch with its checkpoint.
	if opts.MaxBatchBytes < 128<<10 {
		return named, errf(KindInvalid, op, fmt.Sprintf("batch limit of %d bytes (NATS max_payload too small?) cannot hold one maximal receipt; need 128 KiB", opts.MaxBatchBytes), nil)
	}
	if opts.Replicas <= 0 {
		opts.Replicas = 1
	}
	return named, nil
}

// signingKey loads (or, in the data directory, creates) the signing key;
// nil in unsigned mode.
func signingKey(opts *Options) (ed25519.PrivateKey, error) {
	if opts.Unsigned {
		return nil, nil
	}
	priv, src, created, warns, err := loadKey(opts.SigningKeyFile, opts.DataDir)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		opts.Logger.Warn("ledger: " + w)
	}
	if created {
		opts.Logger.Info("ledger: generated a new Ed25519 signing key", "path", src, "keyid", KeyID(priv.Public().(ed25519.PublicKey)))
	}
	return priv, nil
}

// open serves the log stored in st: it checks the batch-count marker,
// rebuilds the tree, installs the signer and re-signs the current
// checkpoint, then starts the committer.
func open(ctx context.Context, st *jsStore, opts *Options, named bool, priv ed25519.PrivateKey) (*Log, error) {
	marker := markerPath(opts.DataDir, st.name)
	marked, err := checkMarker(marker, st)
	if err != nil {
		return nil, err
	}
	l := newLog(st, opts, newOrigin(named, opts.Instance, priv), !named)
	l.marker = marker
	l.marked.Store(marked)
	lastVKey, err := l.rebuild(ctx)
	if err != nil {
		return nil, err
	}
	if err := l.useKey(priv, lastVKey); err != nil {
		return nil, err
	}
	l.markCurrentKey()
	if err := l.resignCheckpoint(); err != nil {
		return nil, err
	}
	if l.size > 0 {
		l.logger.Info("ledger: opened", "origin", l.origin, "tree_size", l.size, "root", hex.EncodeToString(l.cp.Root),
			"batches", len(l.batches), "mode", l.SigningMode())
	}
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(l.appends) // only once open: a failed Open registers nothing
	}
	go l.run()
	return l, nil
}

// newLog is an empty log on st, before its rebuild.
func newLog(st store, opts *Options, origin string, derived bool) *Log {
	l := &Log{
		origin:     origin,
		derived:    derived,
		store:      st,
		logger:     opts.Logger,
		maxEntries: opts.MaxBatchEntries,
		maxBytes:   opts.MaxBatchBytes,
		startTime:  time.Now().UTC(),
		tree:       newTree(),
		reqs:       make(chan *appendReq, 2*opts.MaxBatchEntries),
		quit:       make(chan struct{}),
		done:       make(chan struct{}),
		appends:    newAppendsCounter(nil),
	}
	l.stored, l.failedN = l.appends.WithLabelValues("stored"), l.appends.WithLabelValues("failed")
	return l
}

// useKey installs priv as the signing key (nil: unsigned), noting when it
// is not the key behind lastVKey, the last stored checkpoint's.
func (l *Log) useKey(priv ed25519.PrivateKey, lastVKey string) error {
	if priv == nil {
		return nil
	}
	s, err := newEnvelopeSigner(priv, l.origin)
	if err != nil {
		return err
	}
	es, err := dsse.NewEnvelopeSigner(s)
	if err != nil {
		return errf(KindInvalid, "open", "DSSE signer", err)
	}
	l.signer, l.dsse = s, es
	if lastVKey != "" && lastVKey != s.vkey {
		l.logger.Info("ledger: signing key changed since the last checkpoint", "previous", lastVKey, "current", s.vkey)
	}
	return nil
}

// resignCheckpoint makes the current checkpoint with the key in force
// (Ed25519 is deterministic, so with an unchanged key this is the stored
// text).
func (l *Log) resignCheckpoint() error {
	root, err := l.tree.root(l.size)
	if err != nil {
		return err
	}
	text, err := signCheckpoint(l.signer, l.origin, l.size, root)
	if err != nil {
		return err
	}
	l.cp = Checkpoint{Origin: l.origin, Size: l.size, Root: root, Text: text}
	return nil
}

// newOrigin is the origin of a new log: "cuasd/<instance>" when the
// instance was named; otherwise unique to the log, derived from the
// signing key, or random without one (an unsigned log).
func newOrigin(named bool, instance string, priv ed25519.PrivateKey) string {
	switch {
	case named:
		return "cuasd/" + instance
	case priv != nil:
		return "cuasd/k-" + KeyID(priv.Public().(ed25519.PublicKey))[:16]
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "cuasd/u-" + hex.EncodeToString(b[:])
}

// validInstance reports whether s can name an instance's ledger stream and
// subject token as it is. '.' is refused rather than rewritten: a rewrite
// to '_' made "a.b" and "a_b" share one stream, and a log has one writer.
func validInstance(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// rebuild replays the store into the tree, checking every batch's
// checkpoint root, then verifies the last checkpoint's signature with the
// verifier key stored beside it. It returns that verifier key ("" when the
// last batch was unsigned or the log is empty).
func (l *Log) rebuild(ctx context.Context) (lastVKey string, err error) {
	var (
		b      batch
		lastCP string
	)
	err = l.store.replay(ctx, func(seq uint64, body []byte) error {
		if err := l.replayBatch(&b, seq, body); err != nil {
			return err
		}
		if seq == l.store.count() {
			lastVKey, lastCP = string(b.vkey), string(b.checkpoint)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	l.size = l.tree.n
	if lastVKey != "" {
		if err := l.verifyLastCheckpoint(lastVKey, lastCP); err != nil {
			return "", err
		}
	}
	return lastVKey, nil
}

// replayBatch decodes stored batch seq into b, appends its entries to the
// tree and checks its checkpoint against the rebuilt root.
func (l *Log) replayBatch(b *batch, seq uint64, body []byte) error {
	const op = "open"
	t := l.tree
	if err := decodeBatch(b, body); err != nil {
		return errf(KindIntegrity, op, fmt.Sprintf("batch %d", seq), err)
	}
	if b.first != t.n {
		return errf(KindIntegrity, op, fmt.Sprintf("batch %d starts at index %d, want %d", seq, b.first, t.n), nil)
	}
	var leaf [hashSize]byte
	for i := range b.entries {
		t.leafHash(&leaf, b.entries[i].env)
		t.append(&leaf)
	}
	origin, size, root, err := ParseCheckpoint(b.checkpoint)
	if err != nil {
		return errf(KindIntegrity, op, fmt.Sprintf("batch %d checkpoint", seq), err)
	}
	if seq == 1 {
		l.adoptOrigin(origin)
	}
	if origin != l.origin || size != t.n {
		return errf(KindIntegrity, op, fmt.Sprintf("batch %d checkpoint is for %s size %d, want %s size %d", seq, origin, size, l.origin, t.n), nil)
	}
	got, err := t.root(size)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, root) {
		return errf(KindIntegrity, op, fmt.Sprintf("rebuilt root at size %d is %x, batch %d checkpoint says %x", size, got, seq, root), nil)
	}
	l.batches = append(l.batches, b.first)
	if len(b.vkey) > 0 {
		if err := l.noteKeyUse(string(b.vkey), b.first, b.first+uint64(len(b.entries))-1,
			b.entries[0].time, b.entries[len(b.entries)-1].time); err != nil {
			return errf(KindIntegrity, op, fmt.Sprintf("batch %d verifier key", seq), err)
		}
	}
	return nil
}

// adoptOrigin keeps the origin of the first stored checkpoint: the log's
// own identity, fixed when it was created. A derived origin gives way
// silently; a configured instance name that differs is warned about.
func (l *Log) adoptOrigin(origin string) {
	if origin == l.origin {
		return
	}
	if !l.derived {
		l.logger.Warn("ledger: the log's origin differs from the configured instance; keeping the log's", "log", origin, "configured", l.origin)
	}
	l.origin = origin
}

// verifyLastCheckpoint checks the last stored checkpoint's signature with
// the verifier key stored beside it, and that it is this log's.
func (l *Log) verifyLastCheckpoint(vkey, text string) error {
	const op = "open"
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return errf(KindIntegrity, op, "last checkpoint's verifier key", err)
	}
	n, err := note.Open([]byte(text), note.VerifierList(v))
	if err != nil {
		return errf(KindIntegrity, op, "last checkpoint's signature does not verify", err)
	}
	if v.Name() != l.origin || !strings.HasPrefix(n.Text, l.origin+"\n") {
		return errf(KindIntegrity, op, "last checkpoint is signed for another origin", nil)
	}
	return nil
}

// noteKeyUse records that the key behind vkey signed entries first..last,
// the last of them at time t1 (Unix ns).
func (l *Log) noteKeyUse(vkey string, first, last uint64, t0, t1 int64) error {
	for i := range l.keys {
		if k := &l.keys[i]; k.info.NoteVerifierKey == vkey {
			if k.info.FirstIndex == nil {
				f := first
				k.info.FirstIndex = &f
				k.info.ValidFrom = time.Unix(0, t0).UTC()
			}
			la := last
			k.info.LastIndex = &la
			k.lastTime = t1
			return nil
		}
	}
	pub, err := parseVerifierKey(vkey)
	if err != nil {
		return err
	}
	pemText, err := MarshalPublicKeyPEM(pub)
	if err != nil {
		return err
	}
	f, la := first, last
	l.keys = append(l.keys, keyUse{info: KeyInfo{
		KeyID:           KeyID(pub),
		Algorithm:       "ed25519",
		PublicKeyPEM:    string(pemText),
		NoteVerifierKey: vkey,
		FirstIndex:      &f,
		LastIndex:       &la,
		ValidFrom:       time.Unix(0, t0).UTC(),
	}, lastTime: t1})
	return nil
}

// parseVerifierKey extracts the Ed25519 public key from a signed-note
// verifier key "<name>+<hash>+<base64(0x01 || key)>".
func parseVerifierKey(vkey string) (ed25519.PublicKey, error) {
	if _, err := note.NewVerifier(vkey); err != nil {
		return nil, err
	}
	// Names cannot contain '+', the base64 key can: split from the left.
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return nil, fmt.Errorf("not a verifier key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 1 {
		return nil, fmt.Errorf("not an Ed25519 verifier key")
	}
	return ed25519.PublicKey(raw[1:]), nil
}

// markCurrentKey flags the key this process signs with, adding it to the
// list if it has signed nothing yet.
func (l *Log) markCurrentKey() {
	cur := ""
	if l.signer != nil {
		cur = l.signer.vkey
	}
	found := false
	for i := range l.keys {
		k := &l.keys[i].info
		k.Current = k.NoteVerifierKey == cur
		found = found || k.Current
	}
	if !found && l.signer != nil {
		pemText, _ := MarshalPublicKeyPEM(l.signer.pub)
		l.keys = append(l.keys, keyUse{info: KeyInfo{
			KeyID:           l.signer.keyID,
			Algorithm:       "ed25519",
			PublicKeyPEM:    string(pemText),
			NoteVerifierKey: l.signer.vkey,
			Current:         true,
			ValidFrom:       l.startTime,
		}})
	}
}

// Append signs record as a DSSE envelope whose payload is an in-toto
// Statement v1 (subject name = subject, digest sha256 = SHA-256 of the
// record's compact JSON, predicateType, predicate = record) and returns its
// receipt only after the entry is durably stored, together with a
// checkpoint that commits to it and the inclusion proof against that
// checkpoint.
//
// Concurrent Appends are group-committed: they share one stored batch,
// one sync and one checkpoint signature. If ctx ends after the entry was
// handed to the committer, Append returns ctx's error but the entry may
// still be appended.
func (l *Log) Append(ctx context.Context, subject, predicateType string, record json.RawMessage) (Receipt, error) {
	r, err := l.appendEntry(ctx, subject, predicateType, record)
	switch {
	case err == nil:
		l.stored.Inc()
	case ctx.Err() == nil:
		// A caller giving up is not a ledger failure; anything else is.
		l.failedN.Inc()
	}
	return r, err
}

// newAppendsCounter is cuasd_ledger_appends_total with both outcomes at 0,
// so that an increase() alert sees the very first failure.
func newAppendsCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cuasd_ledger_appends_total",
		Help: "Ledger appends (gate decisions and emitted receipts), by outcome (stored, failed).",
	}, []string{"outcome"})
	c.WithLabelValues("stored")
	c.WithLabelValues("failed")
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func (l *Log) appendEntry(ctx context.Context, subject, predicateType string, record json.RawMessage) (Receipt, error) {
	payload, err := appendStatement(make([]byte, 0, len(record)+len(subject)+len(predicateType)+192), subject, predicateType, record)
	if err != nil {
		return Receipt{}, err
	}
	req := &appendReq{done: make(chan appendResult, 1)}
	if l.dsse != nil {
		env, err := l.dsse.SignPayload(ctx, PayloadType, payload)
		if err != nil {
			return Receipt{}, errf(KindStorage, "append", "sign", err)
		}
		req.env = *env
	} else {
		req.env = dsse.Envelope{
			PayloadType: PayloadType,
			Payload:     base64.StdEncoding.EncodeToString(payload),
			Signatures:  []dsse.Signature{{KeyID: UnsignedKeyID, Sig: ""}},
		}
	}
	if req.envJSON, err = json.Marshal(&req.env); err != nil {
		return Receipt{}, errf(KindInvalid, "append", "encode envelope", err)
	}
	if err := ctx.Err(); err != nil {
		return Receipt{}, err
	}
	select {
	case l.reqs <- req:
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	case <-l.quit:
		return Receipt{}, errf(KindClosed, "append", "", nil)
	}
	select {
	case res := <-req.done:
		return res.r, res.err
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	case <-l.done:
		// The committer has stopped; it answered req if it saw it.
		select {
		case res := <-req.done:
			return res.r, res.err
		default:
			return Receipt{}, errf(KindClosed, "append", "", nil)
		}
	}
}

// run is the committer: it takes whatever appends are waiting (up to the
// batch limits), stores them as one batch, and answers them. While one
// batch is being synced the next one gathers, so the cost of a sync is
// shared by every append that arrived meanwhile.
func (l *Log) run() {
	defer close(l.done)
	var (
		pending []*appendReq
		carry   *appendReq
		buf     []byte
	)
	for {
		var first *appendReq
		if carry != nil {
			first, carry = carry, nil
		} else {
			select {
			case first = <-l.reqs:
			case <-l.quit:
				l.drain(nil)
				return
			}
		}
		pending = append(pending[:0], first)
		size := len(first.envJSON) + 32
	gather:
		for len(pending) < l.maxEntries {
			select {
			case r := <-l.reqs:
				if size+len(r.envJSON)+32 > l.maxBytes-2048 {
					carry = r
					break gather
				}
				pending = append(pending, r)
				size += len(r.envJSON) + 32
			default:
				break gather
			}
		}
		buf = l.commit(pending, buf)
		clear(pending)
	}
}

// drain fails every append still queued when the log closes.
func (l *Log) drain(carry *appendReq) {
	cerr := errf(KindClosed, "append", "", nil)
	if carry != nil {
		carry.done <- appendResult{err: cerr}
	}
	for {
		select {
		case r := <-l.reqs:
			r.done <- appendResult{err: cerr}
		default:
			return
		}
	}
}

// commit stores one batch and answers its appends. buf is reused scratch
// for the encoded batch; the (possibly grown) buffer is returned.
func (l *Log) commit(reqs []*appendReq, buf []byte) []byte {
	l.mu.RLock()
	failed := l.failed
	l.mu.RUnlock()
	if failed != nil {
		failAll(reqs, failed)
		return buf
	}
	c := commitState{first: l.size, size: l.size + uint64(len(reqs))}
	l.appendLeaves(reqs)
	buf, err := l.storeBatch(&c, reqs, buf)
	if err != nil {
		l.rollBack(c.first, len(reqs), err)
		failAll(reqs, err)
		return buf
	}
	l.committed(&c, buf)
	l.answer(reqs, &c)
	return buf
}

// commitState is one batch on its way to the store: its first index, the
// tree size after it, its root and signed checkpoint, its entries' time.
type commitState struct {
	first, size uint64
	root        []byte
	text        string
	now         int64
}

func failAll(reqs []*appendReq, err error) {
	for _, r := range reqs {
		r.done <- appendResult{err: err}
	}
}

// appendLeaves adds the batch's leaves to the tree, tentatively: beyond
// l.size until the batch is stored.
func (l *Log) appendLeaves(reqs []*appendReq) {
	var leaf [hashSize]byte
	l.mu.Lock()
	for _, r := range reqs {
		l.tree.leafHash(&leaf, r.envJSON)
		l.tree.append(&leaf)
	}
	l.mu.Unlock()
}

// storeBatch signs the checkpoint at c.size, encodes the batch into buf
// and stores it, returning once it is durable (or not).
func (l *Log) storeBatch(c *commitState, reqs []*appendReq, buf []byte) ([]byte, error) {
	// Only this goroutine writes the tree, so it may read it unlocked.
	root, err := l.tree.root(c.size)
	if err != nil {
		return buf, err
	}
	text, err := signCheckpoint(l.signer, l.origin, c.size, root)
	if err != nil {
		return buf, err
	}
	c.root, c.text, c.now = root, text, time.Now().UnixNano()
	b := batch{first: c.first, entries: make([]batchEntry, len(reqs)), checkpoint: []byte(text)}
	for i, r := range reqs {
		b.entries[i] = batchEntry{time: c.now, env: r.envJSON}
	}
	if l.signer != nil {
		b.vkey = []byte(l.signer.vkey)
	}
	buf = b.appendTo(buf[:0])
	n := uint64(len(reqs))
	return buf, l.store.append(context.Background(), buf, l.origin+"/"+strconv.FormatUint(c.first, 10)+"+"+strconv.FormatUint(n, 10))
}

// rollBack drops the tentative leaves of a batch that was not stored; if
// the store's state is unknown, appends stop until the log is reopened.
func (l *Log) rollBack(first uint64, n int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tree.truncate(first)
	if KindOf(err) == KindIntegrity {
		l.failed = err
		l.logger.Error("ledger: the store's state is unknown; appends are refused until the ledger is reopened", "err", err)
		return
	}
	l.logger.Error("ledger: batch not stored", "entries", n, "err", err)
}

// committed makes a stored batch part of the log: size, checkpoint,
// batch index, key use and the read cache.
func (l *Log) committed(c *commitState, buf []byte) {
	l.mu.Lock()
	l.size = c.size
	l.cp = Checkpoint{Origin: l.origin, Size: c.size, Root: c.root, Text: c.text}
	l.batches = append(l.batches, c.first)
	if l.signer != nil {
		_ = l.noteKeyUse(l.signer.vkey, c.first, c.size-1, c.now, c.now)
	}
	l.mu.Unlock()
	// The body in buf is reused for the next batch, so the read cache gets
	// its own copy.
	l.cache.put(uint64(len(l.batches)), bytes.Clone(buf))
}

// answer sends each append of a stored batch its receipt.
func (l *Log) answer(reqs []*appendReq, c *commitState) {
	rootHex := hex.EncodeToString(c.root)
	for i, r := range reqs {
		idx := c.first + uint64(i)
		p, err := l.tree.inclusion(idx, c.size)
		if err != nil {
			r.done <- appendResult{err: err}
			continue
		}
		r.done <- appendResult{r: Receipt{
			Index:          idx,
			LeafHash:       hex.EncodeToString(l.tree.node(0, idx)),
			Envelope:       r.env,
			TreeSize:       c.size,
			RootHash:       rootHex,
			InclusionProof: hexAll(p),
			Checkpoint:     c.text,
		}}
	}
}

func hexAll(hs [][]byte) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

// Close stops the committer; queued appends fail with KindClosed. Reads
// keep working on the state at close. Close does not close the NATS
// connection.
func (l *Log) Close() error {
	l.closeOnce.Do(func() { close(l.quit) })
	<-l.done
	if js, ok := l.store.(*jsStore); ok {
		return l.mark(js.acked.Load())
	}
	return nil
}

// Origin is the log's origin line: "cuasd/<instance>" for a log created
// with an instance name, otherwise derived from the signing key (see
// Options.Instance).
func (l *Log) Origin() string { return l.origin }

// SigningMode is ModeEd25519 or ModeUnsigned.
func (l *Log) SigningMode() string {
	if l.signer == nil {
		return ModeUnsigned
	}
	return ModeEd25519
}

// PublicKey is the key this process signs with, nil in unsigned mode.
func (l *Log) PublicKey() ed25519.PublicKey {
	if l.signer == nil {
		return nil
	}
	return l.signer.pub
}

// Checkpoint returns the checkpoint of the current tree.
func (l *Log) Checkpoint() Checkpoint {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cp
}

// Keys lists the public keys that signed entries of this log, in order of
// first use, and the current one. A retired key's ValidUntil is the time
// of the last entry it signed.
func (l *Log) Keys() []KeyInfo {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]KeyInfo, len(l.keys))
	for i, ku := range l.keys {
		k := ku.info
		if k.FirstIndex != nil {
			f := *k.FirstIndex
			k.FirstIndex = &f
		}
		if k.LastIndex != nil {
			la := *k.LastIndex
			k.LastIndex = &la
			if !k.Current {
				t := time.Unix(0, ku.lastTime).UTC()
				k.ValidUntil = &t
			}
		}
		out[i] = k
	}
	return out
}

// InclusionProof returns the RFC 6962 inclusion proof of entry index in the
// tree of size leaves (size <= the current tree size).
func (l *Log) InclusionProof(index, size uint64) ([][]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if size > l.size {
		return nil, errf(KindNotFound, "inclusion proof", fmt.Sprintf("tree size %d is beyond the log (%d)", size, l.size), nil)
	}
	if index >= size {
		return nil, errf(KindInvalid, "inclusion proof", fmt.Sprintf("index %d is not below tree size %d", index, size), nil)
	}
	return l.tree.inclusion(index, size)
}

// ConsistencyProof returns the RFC 6962 consistency proof from the tree of
// first leaves to the tree of second leaves (first <= second <= current
// size).
func (l *Log) ConsistencyProof(first, second uint64) ([][]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if second > l.size {
		return nil, errf(KindNotFound, "consistency proof", fmt.Sprintf("second %d is beyond the tree size %d", second, l.size), nil)
	}
	if first > second {
		return nil, errf(KindInvalid, "consistency proof", fmt.Sprintf("first %d is larger than second %d", first, second), nil)
	}
	return l.tree.consistency(first, second)
}

// RootAt returns the root hash of the tree of size leaves.
func (l *Log) RootAt(size uint64) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if size > l.size {
		return nil, errf(KindNotFound, "root", fmt.Sprintf("tree size %d is beyond the log (%d)", size, l.size), nil)
	}
	return l.tree.root(size)
}

// Entry returns the entry at index.
func (l *Log) Entry(ctx context.Context, index uint64) (Entry, error) {
	es, _, err := l.Entries(ctx, index, 1)
	if err != nil {
		return Entry{}, err
	}
	if len(es) == 0 {
		return Entry{}, errf(KindNotFound, "entry", fmt.Sprintf("no entry at index %d (tree size %d)", index, l.Checkpoint().Size), nil)
	}
	return es[0], nil
}

// Receipt returns the entry at index with its inclusion proof against the
// current checkpoint: a bundle `cuasd verify` accepts, like the one Append
// returned but for the current tree.
func (l *Log) Receipt(ctx context.Context, index uint64) (Receipt, error) {
	e, err := l.Entry(ctx, index)
	if err != nil {
		return Receipt{}, err
	}
	l.mu.RLock()
	cp := l.cp
	p, err := l.tree.inclusion(index, cp.Size)
	l.mu.RUnlock()
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{
		Index:          index,
		LeafHash:       e.LeafHash,
		Envelope:       e.Envelope,
		TreeSize:       cp.Size,
		RootHash:       hex.EncodeToString(cp.Root),
		InclusionProof: hexAll(p),
		Checkpoint:     cp.Text,
	}, nil
}

// Entries returns up to limit entries from index from on, and the
// checkpoint they were read under (entries beyond its size are not
// returned). An empty result with a nil error means from is at or past the
// end.
func (l *Log) Entries(ctx context.Context, from uint64, limit int) ([]Entry, Checkpoint, error) {
	l.mu.RLock()
	cp := l.cp
	var firsts []uint64
	var leaves []byte
	end := from
	if from < cp.Size && limit > 0 {
		end = min(cp.Size, from+uint64(limit))
		firsts = l.batches // append-only: the prefix we read stays valid
		leaves = l.tree.levels[0][:cp.Size*hashSize]
	}
	l.mu.RUnlock()
	if end <= from {
		return nil, cp, nil
	}
	out := make([]Entry, 0, end-from)
	var b batch
	for idx := from; idx < end; {
		// The batch holding idx: the last whose first index is <= idx.
		i := sort.Search(len(firsts), func(i int) bool { return firsts[i] > idx }) - 1
		seq := uint64(i + 1)
		body, err := l.batchBody(ctx, seq)
		if err != nil {
			return nil, cp, err
		}
		if err := decodeBatch(&b, body); err != nil {
			return nil, cp, errf(KindIntegrity, "read", fmt.Sprintf("batch %d", seq), err)
		}
		if b.first != firsts[i] {
			return nil, cp, errf(KindIntegrity, "read", fmt.Sprintf("batch %d starts at %d, index says %d", seq, b.first, firsts[i]), nil)
		}
		for ; idx < end && idx < b.first+uint64(len(b.entries)); idx++ {
			e := b.entries[idx-b.first]
			var env dsse.Envelope
			if err := json.Unmarshal(e.env, &env); err != nil {
				return nil, cp, errf(KindIntegrity, "read", fmt.Sprintf("entry %d envelope", idx), err)
			}
			out = append(out, Entry{
				Index:    idx,
				LeafHash: hex.EncodeToString(leaves[idx*hashSize : (idx+1)*hashSize]),
				Envelope: env,
				Time:     time.Unix(0, e.time).UTC(),
			})
		}
	}
	return out, cp, nil
}

func (l *Log) batchBody(ctx context.Context, seq uint64) ([]byte, error) {
	if b, ok := l.cache.get(seq); ok {
		return b, nil
	}
	b, err := l.store.get(ctx, seq)
	if err != nil {
		return nil, err
	}
	l.cache.put(seq, b)
	return b, nil
}

// batchCache keeps the few most recently used batch bodies: listings read
// consecutive entries, and fresh receipts are read back soon after they
// are written.
type batchCache struct {
	mu    sync.Mutex
	seqs  [16]uint64
	data  [16][]byte
	clock int
}

func (c *batchCache) get(seq uint64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range c.seqs {
		if s == seq && c.data[i] != nil {
			return c.data[i], true
		}
	}
	return nil, false
}

func (c *batchCache) put(seq uint64, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seqs[c.clock], c.data[c.clock] = seq, b
	c.clock = (c.clock + 1) % len(c.seqs)
}
