package bus

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream is cuasd's one handle on JetStream (issue 17): bus and the
// ledger's store are the only code that imports the JetStream client;
// every other package declares the small interface it needs (a key-value
// bucket, a durable consumer, an acknowledged publisher) and a
// *JetStream, or a value it returns, implements it.
type JetStream struct {
	js    jetstream.JetStream
	setup Setup
	log   *slog.Logger // the bus's; nil: slog.Default()
}

// NewJetStream wraps a JetStream client (the bus's own, or a test
// server's from internal/natstest); its buckets are made with the default
// Setup.
func NewJetStream(js jetstream.JetStream) *JetStream { return &JetStream{js: js} }

// JetStream is the bus's JetStream handle.
func (b *Bus) JetStream() *JetStream { return &JetStream{js: b.JS, setup: b.setup, log: b.log} }

func (j *JetStream) logger() *slog.Logger {
	if j.log == nil {
		return slog.Default()
	}
	return j.log
}

// Setup is how the handle creates streams and buckets: the bus's, which
// waits for a forming cluster (Options.SetupTimeout), or the default one.
func (j *JetStream) Setup() Setup { return j.setup }

// Conn is the NATS connection under the handle.
func (j *JetStream) Conn() *nats.Conn { return j.js.Conn() }

// The JetStream errors other packages test for with errors.Is. They are
// the client's own values, so nothing is translated on the way.
var (
	ErrKeyNotFound      = jetstream.ErrKeyNotFound
	ErrKeyExists        = jetstream.ErrKeyExists
	ErrKeyDeleted       = jetstream.ErrKeyDeleted
	ErrBucketNotFound   = jetstream.ErrBucketNotFound
	ErrStreamNotFound   = jetstream.ErrStreamNotFound
	ErrConsumerNotFound = jetstream.ErrConsumerNotFound
)

// KVConfig describes a key-value bucket. Buckets are file-backed.
type KVConfig struct {
	Bucket      string
	Description string
	// History is how many values are kept per key (0 is 1).
	History uint8
	// TTL expires keys not written for that long (0 never).
	TTL time.Duration
	// Replicas is the replication factor (0 is 1).
	Replicas int
}

func (c *KVConfig) jetstream() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      c.Bucket,
		Description: c.Description,
		History:     c.History,
		TTL:         c.TTL,
		Replicas:    max(c.Replicas, 1),
		Storage:     jetstream.FileStorage,
	}
}

// KV is a key-value bucket. Its methods are safe for concurrent use.
type KV struct {
	j   *JetStream
	cfg KVConfig
	kv  jetstream.KeyValue
}

// KVEntry is one value of a key, or its deletion.
type KVEntry struct {
	Key      string
	Value    []byte
	Revision uint64
	// Deleted is set for a delete or purge marker (watchers only).
	Deleted bool
}

// KeyValue creates the bucket, or updates its configuration, and binds
// it, waiting through the Setup for a cluster that cannot place it yet.
func (j *JetStream) KeyValue(ctx context.Context, cfg KVConfig) (*KV, error) {
	var kv jetstream.KeyValue
	err := j.setup.Do(ctx, "bucket "+cfg.Bucket, func(ctx context.Context) error {
		var err error
		kv, err = j.js.CreateOrUpdateKeyValue(ctx, cfg.jetstream())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &KV{j: j, cfg: cfg, kv: kv}, nil
}

// Bucket is the bucket's name.
func (kv *KV) Bucket() string { return kv.cfg.Bucket }

// Get returns the current value of key (ErrKeyNotFound when there is none).
func (kv *KV) Get(ctx context.Context, key string) (KVEntry, error) {
	e, err := kv.kv.Get(ctx, key)
	if err != nil {
		return KVEntry{}, err
	}
	return KVEntry{Key: e.Key(), Value: e.Value(), Revision: e.Revision()}, nil
}

// Put writes value under key and returns its revision.
func (kv *KV) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return kv.kv.Put(ctx, key, value)
}

// Create writes value under key unless the key holds a value
// (ErrKeyExists).
func (kv *KV) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	return kv.kv.Create(ctx, key, value)
}

// Update writes value under key if the key's revision is still rev
// (compare-and-swap).
func (kv *KV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	return kv.kv.Update(ctx, key, value, rev)
}

// Delete deletes key; with lastRevision > 0 only while the key's revision
// is still lastRevision.
func (kv *KV) Delete(ctx context.Context, key string, lastRevision uint64) error {
	if lastRevision > 0 {
		return kv.kv.Delete(ctx, key, jetstream.LastRevision(lastRevision))
	}
	return kv.kv.Delete(ctx, key)
}

// Keys lists the keys holding a value (none is not an error).
func (kv *KV) Keys(ctx context.Context) ([]string, error) {
	keys, err := kv.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	return keys, err
}

// Missing reports whether the bucket no longer exists (deleted behind the
// process's back).
func (kv *KV) Missing(ctx context.Context) (bool, error) {
	_, err := kv.j.js.KeyValue(ctx, kv.cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return true, nil
	}
	return false, err
}

// Recreate creates the bucket again with its configuration; the KV keeps
// working on the new bucket.
func (kv *KV) Recreate(ctx context.Context) error {
	_, err := kv.j.js.CreateOrUpdateKeyValue(ctx, kv.cfg.jetstream())
	return err
}

// WatchAll watches every key: first each current value, then a nil entry
// marking the end of the initial values, then every change as it happens
// (deletions too unless ignoreDeletes). The updates end when ctx ends or
// Stop is called.
func (kv *KV) WatchAll(ctx context.Context, ignoreDeletes bool) (*KVWatcher, error) {
	var opts []jetstream.WatchOpt
	if ignoreDeletes {
		opts = append(opts, jetstream.IgnoreDeletes())
	}
	w, err := kv.kv.WatchAll(ctx, opts...)
	if err != nil {
		return nil, err
	}
	kw := &KVWatcher{w: w, ch: make(chan *KVEntry), done: make(chan struct{})}
	go kw.forward()
	return kw, nil
}

// KVWatcher delivers a bucket's values and changes (KV.WatchAll).
type KVWatcher struct {
	w    jetstream.KeyWatcher
	ch   chan *KVEntry
	done chan struct{}
	stop sync.Once
}

// Updates is the channel of entries; it is closed when the watch ends.
func (w *KVWatcher) Updates() <-chan *KVEntry { return w.ch }

// Stop ends the watch.
func (w *KVWatcher) Stop() error {
	var err error
	w.stop.Do(func() {
		close(w.done)
		err = w.w.Stop()
	})
	return err
}

func (w *KVWatcher) forward() {
	defer close(w.ch)
	for e := range w.w.Updates() {
		var out *KVEntry
		if e != nil {
			out = &KVEntry{Key: e.Key(), Value: e.Value(), Revision: e.Revision(), Deleted: e.Operation() != jetstream.KeyValuePut}
		}
		select {
		case w.ch <- out:
		case <-w.done:
			return
		}
	}
}

// EnsureAlertStream creates StreamAlerts (cuas.alert.>), or updates its
// configuration: messages kept maxAge, at most 1 GiB, de-duplicated over
// 10 minutes (several instances publish each alert message under one id).
func (j *JetStream) EnsureAlertStream(ctx context.Context, maxAge time.Duration, replicas int) error {
	cfg := jetstream.StreamConfig{
		Name: StreamAlerts, Subjects: []string{AlertPrefix + ".>"}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, MaxAge: maxAge, MaxBytes: 1 << 30,
		Duplicates: 10 * time.Minute, Replicas: max(replicas, 1),
	}
	return j.setup.Do(ctx, "stream "+StreamAlerts, func(ctx context.Context) error {
		_, err := j.js.CreateOrUpdateStream(ctx, cfg)
		return err
	})
}
