package zones

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/lifecycle"
)

// Keys of the bucket.
const (
	geofencePrefix = "geofence."
	allowKey       = "allowlist"
	// versionPrefix keys every geofence version ever stored by its
	// content digest (gate.Geofence.Digest): decision records name a zone
	// by id and digest, and the version stays here after the zone is
	// replaced or deleted, so a record stays verifiable. A version key is
	// written once and never changed.
	versionPrefix = "version."
)

// Config says where the zones live and what seeds them.
type Config struct {
	// Bucket is the KV bucket (default bus.BucketZones).
	Bucket string
	// Replicas of the bucket's stream (default 1).
	Replicas int
	// Geofences seed the bucket: each is written only when its key is
	// absent (never written, or deleted). IDs are required.
	Geofences []gate.Geofence
	// AllowList, when not nil, seeds the allow-list if none is stored.
	AllowList *gate.AllowList
	// Logger receives warnings about unreadable entries (default
	// slog.Default()).
	Logger *slog.Logger
	// VersionDir, when set, is a directory (created when first needed) in
	// which every geofence version this store sees — stored by it or
	// delivered by its watch from another instance — is also kept, as
	// <sha256>.json (issue 23). The versions then outlive the bucket:
	// Version falls back to the directory, and Recreate writes every one
	// back, so receipts naming an old zone version stay checkable after
	// the bucket was deleted. cuasd serve uses <data-dir>/zone-versions.
	VersionDir string
	// OnChange, when not nil, is called from the watch goroutine (one call
	// at a time) with the current snapshot: once when the initial values
	// are loaded, then after every change the watch delivers, whichever
	// instance made it. It must not block for long.
	OnChange func(*Snapshot)
	// Reporter reports the watch, a supervised loop: a watch that ends
	// (a stall, a lost stream leader, JetStream restarted) is opened
	// again with back-off and replays the bucket's current values, older
	// revisions ignored (nil: lifecycle.Discard).
	Reporter lifecycle.Reporter
	// Setup, when set, runs the seeding writes (bus.Setup's Do): a bucket
	// a forming cluster has just created may have no leader yet, and its
	// first writes find no stream to answer them. nil runs them once.
	Setup func(ctx context.Context, what string, create func(context.Context) error) error
}

// Error is the error type of this package: an operation on a key that
// failed, wrapping the cause (a *gate.Error for invalid input).
type Error struct {
	Op  string
	Key string
	Err error
}

func (e *Error) Error() string {
	if e.Key == "" {
		return "zones: " + e.Op + ": " + e.Err.Error()
	}
	return "zones: " + e.Op + " " + e.Key + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Snapshot is an immutable view of the zones at one bucket revision.
type Snapshot struct {
	// Revision is the highest bucket revision applied.
	Revision uint64
	// Geofences sorted by ID. Read-only: shared by every reader.
	Geofences []gate.Geofence
	// AllowList in canonical form, and its index.
	AllowList gate.AllowList
	Allow     *gate.AllowIndex
}

// Geofence returns the geofence with the ID.
func (s *Snapshot) Geofence(id string) (gate.Geofence, bool) {
	i, ok := slices.BinarySearchFunc(s.Geofences, id, func(g gate.Geofence, id string) int { return strings.Compare(g.ID, id) })
	if !ok {
		return gate.Geofence{}, false
	}
	return s.Geofences[i], true
}

// Store is the replicated zone store. Its methods are safe for concurrent
// use.
type Store struct {
	kv  KV
	log *slog.Logger
	cfg Config

	snap atomic.Pointer[Snapshot]

	mu     sync.Mutex
	fences map[string]gate.Geofence
	allow  gate.AllowList
	revs   map[string]uint64 // last revision applied per key, deletes included
	top    uint64

	cancel context.CancelFunc
	done   chan struct{}
}

// KV is the bucket the zones live in: a *bus.KV opened with
// BucketConfig.
type KV interface {
	Get(ctx context.Context, key string) (bus.KVEntry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	// Create fails with bus.ErrKeyExists when the key holds a value.
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	// Delete with lastRevision 0 deletes whatever the key holds.
	Delete(ctx context.Context, key string, lastRevision uint64) error
	// WatchAll delivers every current value, a nil entry, then changes.
	WatchAll(ctx context.Context, ignoreDeletes bool) (*bus.KVWatcher, error)
	Missing(ctx context.Context) (bool, error)
	Recreate(ctx context.Context) error
}

// BucketConfig is the configuration of cfg's bucket (CUAS_ZONES unless
// cfg.Bucket names another), to open the KV that Open takes.
func BucketConfig(cfg Config) bus.KVConfig {
	cfg.defaults()
	return bus.KVConfig{
		Bucket:      cfg.Bucket,
		Description: "cuasd geofences and allow-list",
		History:     10,
		Replicas:    cfg.Replicas,
	}
}

func (cfg *Config) defaults() {
	if cfg.Bucket == "" {
		cfg.Bucket = bus.BucketZones
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
}

// Open seeds kv (the bucket of BucketConfig(cfg)) from cfg, loads every
// entry and starts watching for changes. It returns once the snapshot
// holds the bucket's current contents.
func Open(ctx context.Context, kv KV, cfg Config) (*Store, error) {
	cfg.defaults()
	if err := validateSeeds(&cfg); err != nil {
		return nil, err
	}
	s := &Store{kv: kv, log: cfg.Logger, cfg: cfg, fences: map[string]gate.Geofence{}, revs: map[string]uint64{}}
	s.snap.Store(&Snapshot{Geofences: []gate.Geofence{}, Allow: gate.NewAllowIndex(gate.AllowList{})})

	seed := s.seed
	if cfg.Setup != nil {
		seed = func(ctx context.Context) error { return cfg.Setup(ctx, "bucket "+cfg.Bucket+" seed", s.seed) }
	}
	if err := seed(ctx); err != nil {
		return nil, err
	}

	wctx, cancel := context.WithCancel(context.Background())
	w, err := kv.WatchAll(wctx, false)
	if err != nil {
		cancel()
		return nil, &Error{Op: "watch", Key: cfg.Bucket, Err: err}
	}
	s.cancel, s.done = cancel, make(chan struct{})
	loaded := make(chan struct{})
	go s.follow(wctx, w, loaded)
	select {
	case <-loaded:
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, &Error{Op: "load", Key: cfg.Bucket, Err: ctx.Err()}
	case <-s.done:
		return nil, &Error{Op: "load", Key: cfg.Bucket, Err: errors.New("watch ended before the initial values arrived")}
	}
}

func validateSeeds(cfg *Config) error {
	var e gate.Error
	seen := map[string]bool{}
	for i, g := range cfg.Geofences {
		p := fmt.Sprintf("geofences[%d]", i)
		if g.ID == "" {
			e.Fields = append(e.Fields, gate.FieldError{Field: p + ".id", Message: "is required"})
		} else if seen[g.ID] {
			e.Fields = append(e.Fields, gate.FieldError{Field: p + ".id", Message: "duplicates another geofence's id"})
		}
		seen[g.ID] = true
		if err := g.Validate(); err != nil {
			for _, f := range err.(*gate.Error).Fields {
				e.Fields = append(e.Fields, gate.FieldError{Field: p + "." + f.Field, Message: f.Message})
			}
		}
	}
	if cfg.AllowList != nil {
		if err := cfg.AllowList.Validate(); err != nil {
			for _, f := range err.(*gate.Error).Fields {
				e.Fields = append(e.Fields, gate.FieldError{Field: "allowlist." + f.Field, Message: f.Message})
			}
		}
	}
	if len(e.Fields) > 0 {
		return &Error{Op: "seed", Err: &e}
	}
	return nil
}

// seed writes cfg's geofences (and their versions) and allow-list unless
// the bucket has them: each write again is harmless (Create of an
// existing key), so a seeding cut short can be run again.
func (s *Store) seed(ctx context.Context) error {
	for _, g := range s.cfg.Geofences {
		if err := s.keepVersion(ctx, &g); err != nil {
			return err
		}
		if err := s.create(ctx, geofencePrefix+g.ID, g); err != nil {
			return err
		}
	}
	if s.cfg.AllowList != nil {
		return s.create(ctx, allowKey, s.cfg.AllowList.Normalize())
	}
	return nil
}

// create writes v under key unless the key holds a value.
func (s *Store) create(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &Error{Op: "seed", Key: key, Err: err}
	}
	if _, err := s.kv.Create(ctx, key, b); err != nil && !errors.Is(err, bus.ErrKeyExists) {
		return &Error{Op: "seed", Key: key, Err: err}
	}
	return nil
}

// watch applies every change until the watcher stops. The nil entry marks
// the end of the initial values.
// follow applies the bucket's changes until ctx ends, opening the watch
// again whenever it ends by itself (under lifecycle.Retry, the supervisor
// of every loop).
func (s *Store) follow(ctx context.Context, w *bus.KVWatcher, loaded chan struct{}) {
	defer close(s.done)
	rep := s.cfg.Reporter
	if rep == nil {
		rep = lifecycle.Discard
	}
	_ = lifecycle.Retry(rep, 5*time.Second, func(ctx context.Context, rep lifecycle.Reporter) error {
		if w == nil {
			var err error
			if w, err = s.kv.WatchAll(ctx, false); err != nil {
				return &Error{Op: "watch", Key: s.cfg.Bucket, Err: err}
			}
		}
		rep.Up()
		loaded = s.watch(w, loaded)
		w = nil
		return &Error{Op: "watch", Key: s.cfg.Bucket, Err: errors.New("the watch ended")}
	})(ctx)
}

// watch applies w's entries until its updates end; it closes loaded once
// the initial values are in, and returns it when they never came (nil
// otherwise).
func (s *Store) watch(w *bus.KVWatcher, loaded chan struct{}) chan struct{} {
	defer func() { _ = w.Stop() }()
	for e := range w.Updates() {
		if e == nil {
			if loaded != nil {
				close(loaded)
				loaded = nil
				if s.cfg.OnChange != nil {
					s.cfg.OnChange(s.Snapshot())
				}
			}
			continue
		}
		if strings.HasPrefix(e.Key, versionPrefix) && !e.Deleted {
			_ = s.keepFile(e.Value) // logged; another instance's write stands
		}
		s.apply(e.Key, e.Revision, e.Deleted, e.Value)
		if loaded == nil && s.cfg.OnChange != nil {
			s.cfg.OnChange(s.Snapshot())
		}
	}
	return loaded
}

// apply folds one entry into the state, ignoring anything older than what
// is already applied (our own writes are applied before the watch echoes
// them).
func (s *Store) apply(key string, rev uint64, del bool, value []byte) {
	s.mu.Lock()
	if rev <= s.revs[key] {
		s.mu.Unlock()
		return
	}
	s.revs[key] = rev
	s.top = max(s.top, rev)
	switch {
	case key == allowKey && del:
		s.allow = gate.AllowList{}
	case key == allowKey:
		var a gate.AllowList
		if err := decode(value, &a); err != nil || a.Validate() != nil {
			s.log.Warn("zones: ignoring an unreadable allow-list", "bucket", s.cfg.Bucket, "revision", rev, "err", errors.Join(err, a.Validate()))
			break
		}
		s.allow = a.Normalize()
	case strings.HasPrefix(key, versionPrefix):
		// Versions are read on demand (Version), not held in the snapshot.
	case strings.HasPrefix(key, geofencePrefix) && del:
		delete(s.fences, strings.TrimPrefix(key, geofencePrefix))
	case strings.HasPrefix(key, geofencePrefix):
		id := strings.TrimPrefix(key, geofencePrefix)
		var g gate.Geofence
		if err := decode(value, &g); err != nil || g.Validate() != nil || g.ID != id {
			s.log.Warn("zones: ignoring an unreadable geofence", "key", key, "revision", rev, "err", errors.Join(err, g.Validate()))
			delete(s.fences, id)
			break
		}
		g.Prepare() // once per zone version: sweeps then cost log n per edge scan (issue 23)
		s.fences[id] = g
	default:
		s.log.Warn("zones: ignoring an unknown key", "key", key)
	}
	s.snap.Store(s.snapshotLocked())
	s.mu.Unlock()
}

func decode(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *Store) snapshotLocked() *Snapshot {
	fs := make([]gate.Geofence, 0, len(s.fences))
	for _, g := range s.fences {
		fs = append(fs, g)
	}
	slices.SortFunc(fs, func(a, b gate.Geofence) int { return strings.Compare(a.ID, b.ID) })
	return &Snapshot{Revision: s.top, Geofences: fs, AllowList: s.allow, Allow: gate.NewAllowIndex(s.allow)}
}

// Snapshot returns the current zones. It never blocks and the snapshot is
// never modified: a reader may keep it as long as it likes.
func (s *Store) Snapshot() *Snapshot { return s.snap.Load() }

// Geofences returns every geofence, sorted by ID.
func (s *Store) Geofences(ctx context.Context) ([]gate.Geofence, error) {
	return s.Snapshot().Geofences, nil
}

// Geofence returns one geofence.
func (s *Store) Geofence(ctx context.Context, id string) (gate.Geofence, bool, error) {
	g, ok := s.Snapshot().Geofence(id)
	return g, ok, nil
}

// PutGeofence validates and stores g under g.ID and reports whether it is
// new. The change is in this instance's snapshot when PutGeofence returns
// and reaches the others through their watch.
func (s *Store) PutGeofence(ctx context.Context, g gate.Geofence) (created bool, err error) {
	key := geofencePrefix + g.ID
	if !gate.ValidID(g.ID) {
		return false, &Error{Op: "put", Key: key, Err: &gate.Error{Fields: []gate.FieldError{{Field: "id", Message: "must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'"}}}}
	}
	if err := g.Validate(); err != nil {
		return false, &Error{Op: "put", Key: key, Err: err}
	}
	b, err := json.Marshal(g)
	if err != nil {
		return false, &Error{Op: "put", Key: key, Err: err}
	}
	// The version first: a record may name it as soon as the zone is live.
	if err := s.keepVersion(ctx, &g); err != nil {
		return false, err
	}
	rev, err := s.kv.Create(ctx, key, b)
	created = err == nil
	if errors.Is(err, bus.ErrKeyExists) {
		rev, err = s.kv.Put(ctx, key, b)
	}
	if err != nil {
		return false, &Error{Op: "put", Key: key, Err: err}
	}
	s.apply(key, rev, false, b)
	return created, nil
}

// Missing reports whether the bucket no longer exists (deleted behind the
// store's back).
func (s *Store) Missing(ctx context.Context) (bool, error) {
	return s.kv.Missing(ctx)
}

// Recreate creates the bucket again and writes back what this instance
// holds: every geofence (with its version) and the allow-list, so a
// deleted bucket loses nothing another write had not already replaced.
func (s *Store) Recreate(ctx context.Context) error {
	if err := s.kv.Recreate(ctx); err != nil {
		return &Error{Op: "recreate bucket", Key: s.cfg.Bucket, Err: err}
	}
	// A new bucket numbers its revisions from 1 again: forget the old
	// ones, or every later write would look older than what is applied.
	s.mu.Lock()
	s.revs, s.top = map[string]uint64{}, 0
	s.mu.Unlock()
	if err := s.restoreVersions(ctx); err != nil {
		return err
	}
	snap := s.Snapshot()
	for _, g := range snap.Geofences {
		if err := s.keepVersion(ctx, &g); err != nil {
			return err
		}
		if err := s.create(ctx, geofencePrefix+g.ID, g); err != nil {
			return err
		}
	}
	return s.create(ctx, allowKey, snap.AllowList)
}

// keepVersion stores g under its digest unless that version is stored.
func (s *Store) keepVersion(ctx context.Context, g *gate.Geofence) error {
	b, err := json.Marshal(g)
	if err != nil {
		return &Error{Op: "keep version", Key: g.ID, Err: err}
	}
	key := versionPrefix + gate.DigestOf(b)
	if _, err := s.kv.Create(ctx, key, b); err != nil && !errors.Is(err, bus.ErrKeyExists) {
		return &Error{Op: "keep version", Key: key, Err: err}
	}
	if err := s.keepFile(b); err != nil {
		return &Error{Op: "keep version", Key: key, Err: err}
	}
	return nil
}

// Version returns the geofence version with the digest (hex SHA-256 of its
// JSON, as decision records name it) and whether it is stored. The
// returned geofence's digest is checked against the one asked for.
func (s *Store) Version(ctx context.Context, digest string) (gate.Geofence, bool, error) {
	if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
		return gate.Geofence{}, false, nil
	}
	// The bucket first; the version directory when the bucket has not got
	// it or cannot answer (deleted, NATS down).
	var value []byte
	e, err := s.kv.Get(ctx, versionPrefix+digest)
	if err == nil {
		value = e.Value
	} else if value = s.readFile(digest); value == nil {
		if errors.Is(err, bus.ErrKeyNotFound) {
			return gate.Geofence{}, false, nil
		}
		return gate.Geofence{}, false, &Error{Op: "version", Key: digest, Err: err}
	}
	var g gate.Geofence
	if err := decode(value, &g); err != nil {
		return gate.Geofence{}, false, &Error{Op: "version", Key: digest, Err: err}
	}
	if gate.DigestOf(value) != digest {
		return gate.Geofence{}, false, &Error{Op: "version", Key: digest, Err: errors.New("stored content does not match its digest")}
	}
	return g, true, nil
}

// DeleteGeofence removes a geofence and reports whether it existed.
func (s *Store) DeleteGeofence(ctx context.Context, id string) (existed bool, err error) {
	key := geofencePrefix + id
	if !gate.ValidID(id) {
		return false, nil
	}
	if _, err := s.kv.Get(ctx, key); errors.Is(err, bus.ErrKeyNotFound) {
		return false, nil
	} else if err != nil {
		return false, &Error{Op: "delete", Key: key, Err: err}
	}
	if err := s.kv.Delete(ctx, key, 0); err != nil {
		return false, &Error{Op: "delete", Key: key, Err: err}
	}
	// Delete returns no revision: drop the geofence from this instance's
	// view now, leaving the key's revision alone so that the watch still
	// applies the delete marker, and any later put, in bucket order.
	s.mu.Lock()
	delete(s.fences, id)
	s.snap.Store(s.snapshotLocked())
	s.mu.Unlock()
	return true, nil
}

// AllowList returns the allow-list in canonical form.
func (s *Store) AllowList(ctx context.Context) (gate.AllowList, error) {
	return s.Snapshot().AllowList, nil
}

// PutAllowList validates and replaces the allow-list.
func (s *Store) PutAllowList(ctx context.Context, a gate.AllowList) error {
	if err := a.Validate(); err != nil {
		return &Error{Op: "put", Key: allowKey, Err: err}
	}
	a = a.Normalize()
	b, err := json.Marshal(a)
	if err != nil {
		return &Error{Op: "put", Key: allowKey, Err: err}
	}
	rev, err := s.kv.Put(ctx, allowKey, b)
	if err != nil {
		return &Error{Op: "put", Key: allowKey, Err: err}
	}
	s.apply(allowKey, rev, false, b)
	return nil
}

// MatchAllowList reports whether an identity is on the allow-list.
func (s *Store) MatchAllowList(ctx context.Context, id gate.Identity) (gate.AllowStatus, error) {
	st, _ := s.Snapshot().Allow.Match(id)
	return st, nil
}

// Close stops the watch and waits for it to end. The bucket is untouched.
func (s *Store) Close() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return nil
}
