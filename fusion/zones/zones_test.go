package zones

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/natstest"
)

// startServer runs an embedded JetStream server for one test.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	return natstest.Start(t).Srv
}

// connect opens a separate client connection: one per simulated instance.
func connect(t *testing.T, ns *server.Server) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func airport() gate.Geofence {
	return gate.Geofence{ID: "egll", Name: "Heathrow", Class: gate.ClassAirport, Center: []float64{51.47, -0.4543}, RadiusM: 5000}
}

func prison() gate.Geofence {
	return gate.Geofence{ID: "hmp-1", Class: gate.ClassPrison, Polygon: &gate.Polygon{Type: "Polygon",
		Coordinates: [][][]float64{{{-0.2, 51.5}, {-0.19, 51.5}, {-0.19, 51.51}, {-0.2, 51.5}}}}}
}

// bucket opens cfg's bucket through js, as cuasd serve does.
func bucket(t *testing.T, js jetstream.JetStream, cfg Config) *bus.KV {
	t.Helper()
	kv, err := bus.NewJetStream(js).KeyValue(context.Background(), BucketConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func open(t *testing.T, js jetstream.JetStream, cfg Config) *Store {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Open(ctx, bucket(t, js, cfg), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ids(gs []gate.Geofence) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.ID)
	}
	return out
}

func TestSeedPutDeleteAndRestart(t *testing.T) {
	ns := startServer(t)
	ctx := context.Background()
	seed := Config{Geofences: []gate.Geofence{airport()}, AllowList: &gate.AllowList{ICAO: []string{"4ca2d1"}}}
	s := open(t, connect(t, ns), seed)

	got, _ := s.Geofences(ctx)
	if !slices.Equal(ids(got), []string{"egll"}) {
		t.Fatalf("seeded geofences %v", ids(got))
	}
	if a, _ := s.AllowList(ctx); !slices.Equal(a.ICAO, []string{"4CA2D1"}) {
		t.Errorf("seeded allow-list %+v (ICAO addresses are stored upper case)", a)
	}
	if st, _ := s.MatchAllowList(ctx, gate.Identity{ICAO: "4ca2d1"}); st != gate.AllowListed {
		t.Errorf("allow-list match: %v", st)
	}

	// Put a new one, replace the seeded one.
	created, err := s.PutGeofence(ctx, prison())
	if err != nil || !created {
		t.Fatalf("put new: %v %v", created, err)
	}
	changed := airport()
	changed.RadiusM = 8000
	if created, err := s.PutGeofence(ctx, changed); err != nil || created {
		t.Fatalf("replace: created %v err %v", created, err)
	}
	if g, ok, _ := s.Geofence(ctx, "egll"); !ok || g.RadiusM != 8000 {
		t.Fatalf("read your write: %+v %v", g, ok)
	}

	// Invalid input never reaches the bucket.
	bad := airport()
	bad.RadiusM = -1
	_, err = s.PutGeofence(ctx, bad)
	var ge *gate.Error
	if !errors.As(err, &ge) || ge.Fields[0].Field != "radius_m" {
		t.Errorf("invalid geofence: %v", err)
	}
	bad = airport()
	bad.ID = "has space"
	if _, err := s.PutGeofence(ctx, bad); !errors.As(err, &ge) {
		t.Errorf("invalid id: %v", err)
	}

	// Delete.
	if existed, err := s.DeleteGeofence(ctx, "hmp-1"); err != nil || !existed {
		t.Fatalf("delete: %v %v", existed, err)
	}
	if existed, err := s.DeleteGeofence(ctx, "hmp-1"); err != nil || existed {
		t.Fatalf("delete again: %v %v", existed, err)
	}
	if _, ok, _ := s.Geofence(ctx, "hmp-1"); ok {
		t.Fatal("deleted geofence still readable")
	}
	_ = s.Close()

	// A restart with the same seed keeps the API's edit of egll.
	s2 := open(t, connect(t, ns), seed)
	if g, ok := s2.Snapshot().Geofence("egll"); !ok || g.RadiusM != 8000 {
		t.Errorf("after restart egll is %+v, want the edited radius 8000", g)
	}
	if _, ok := s2.Snapshot().Geofence("hmp-1"); ok {
		t.Error("deleted geofence came back")
	}
}

// Two instances on one bucket: a change made through one reaches the
// other through its watch.
func TestWatchReplicatesAcrossInstances(t *testing.T) {
	ns := startServer(t)
	ctx := context.Background()
	a := open(t, connect(t, ns), Config{})
	changes := make(chan *Snapshot, 64)
	b := open(t, connect(t, ns), Config{OnChange: func(s *Snapshot) { changes <- s }})

	waitFor := func(what string, ok func(*Snapshot) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			if ok(b.Snapshot()) {
				return
			}
			select {
			case <-changes:
			case <-deadline:
				t.Fatalf("instance b never saw %s", what)
			}
		}
	}
	if _, err := a.PutGeofence(ctx, prison()); err != nil {
		t.Fatal(err)
	}
	waitFor("the new geofence", func(s *Snapshot) bool { _, ok := s.Geofence("hmp-1"); return ok })
	if err := a.PutAllowList(ctx, gate.AllowList{UASIDs: []string{"1581F5FJD239C00DW22E"}}); err != nil {
		t.Fatal(err)
	}
	waitFor("the allow-list", func(s *Snapshot) bool {
		st, _ := s.Allow.Match(gate.Identity{UASID: "1581F5FJD239C00DW22E"})
		return st == gate.AllowListed
	})
	if _, err := a.DeleteGeofence(ctx, "hmp-1"); err != nil {
		t.Fatal(err)
	}
	waitFor("the delete", func(s *Snapshot) bool { _, ok := s.Geofence("hmp-1"); return !ok })
}

// Entries written by something else that do not validate are ignored,
// never served.
func TestIgnoresInvalidEntries(t *testing.T) {
	ns := startServer(t)
	ctx := context.Background()
	js := connect(t, ns)
	s := open(t, js, Config{Bucket: "ZONES_T"})
	kv, err := js.KeyValue(ctx, "ZONES_T")
	if err != nil {
		t.Fatal(err)
	}
	for key, val := range map[string]string{
		"geofence.x":   `{"id":"x","center":[95,0],"radius_m":10}`,
		"geofence.y":   `not json`,
		"geofence.z":   `{"id":"other","center":[0,0],"radius_m":10}`,
		"allowlist":    `{"icao":["nothex"]}`,
		"something":    `{}`,
		"geofence.ok1": `{"id":"ok1","center":[0,0],"radius_m":10}`,
	} {
		if _, err := kv.PutString(ctx, key, val); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := s.Snapshot().Geofence("ok1"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("valid entry never applied")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := ids(s.Snapshot().Geofences); !slices.Equal(got, []string{"ok1"}) {
		t.Errorf("geofences %v, want only ok1", got)
	}
	if len(s.Snapshot().AllowList.ICAO) != 0 {
		t.Error("invalid allow-list applied")
	}
}

func TestSeedValidation(t *testing.T) {
	ns := startServer(t)
	bad := airport()
	bad.RadiusM = 0
	_, err := Open(context.Background(), bucket(t, connect(t, ns), Config{}), Config{Logger: quiet(),
		Geofences: []gate.Geofence{bad, {Center: []float64{0, 0}, RadiusM: 1}, airport()},
		AllowList: &gate.AllowList{ICAO: []string{"xyz"}}})
	var ze *Error
	var ge *gate.Error
	if !errors.As(err, &ze) || !errors.As(err, &ge) {
		t.Fatalf("want a zones.Error wrapping a gate.Error, got %v", err)
	}
	var fields []string
	for _, f := range ge.Fields {
		fields = append(fields, f.Field)
	}
	want := []string{"geofences[0].radius_m", "geofences[1].id", "geofences[2].id", "allowlist.icao[0]"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

// TestVersionsOutliveTheirZone: every version of a geofence is kept under
// its digest, so a decision record naming (id, digest) stays verifiable
// after the zone is replaced or deleted (issue 23, item 4).
func TestVersionsOutliveTheirZone(t *testing.T) {
	ns := startServer(t)
	ctx := context.Background()
	s := open(t, connect(t, ns), Config{Geofences: []gate.Geofence{airport()}})
	seeded := airport()
	v0 := seeded.Digest()
	p := airport()
	p.ID, p.RadiusM = "c1", 100
	if _, err := s.PutGeofence(ctx, p); err != nil {
		t.Fatal(err)
	}
	v1 := p.Digest()
	p.RadiusM *= 2
	if p.Digest() == v1 {
		t.Fatal("a changed zone has the same digest")
	}
	if _, err := s.PutGeofence(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteGeofence(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		digest string
		id     string
		radius float64
	}{{v0, seeded.ID, seeded.RadiusM}, {v1, p.ID, p.RadiusM / 2}, {p.Digest(), p.ID, p.RadiusM}} {
		g, ok, err := s.Version(ctx, want.digest)
		if err != nil || !ok || g.ID != want.id || g.RadiusM != want.radius || g.Digest() != want.digest {
			t.Errorf("version %s: %+v %v %v", want.digest, g, ok, err)
		}
	}
	if _, ok, _ := s.Version(ctx, "00"); ok {
		t.Error("a malformed digest was found")
	}
	if got, _ := s.Geofences(ctx); !slices.Equal(ids(got), []string{"egll"}) {
		t.Errorf("versions leaked into the geofences: %v", ids(got))
	}
}

// TestRecreateAfterBucketDeleted: a bucket deleted behind the store's back
// is recreated with what the store holds, and later writes apply (issue
// 23, item 1).
func TestRecreateAfterBucketDeleted(t *testing.T) {
	ns := startServer(t)
	ctx := context.Background()
	js := connect(t, ns)
	s := open(t, js, Config{Geofences: []gate.Geofence{airport()}})
	if _, err := s.PutGeofence(ctx, prison()); err != nil {
		t.Fatal(err)
	}
	// Many revisions in the old bucket: more than the new one will reach.
	for r := range 20 {
		g := airport()
		g.RadiusM = float64(1000 + r)
		if _, err := s.PutGeofence(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.DeleteKeyValue(ctx, bus.BucketZones); err != nil {
		t.Fatal(err)
	}
	if gone, err := s.Missing(ctx); !gone || err != nil {
		t.Fatalf("Missing after deletion: %v %v", gone, err)
	}
	if err := s.Recreate(ctx); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, bus.BucketZones)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"egll", prison().ID} {
		if _, err := kv.Get(ctx, "geofence."+id); err != nil {
			t.Errorf("geofence %s not written back: %v", id, err)
		}
	}
	g := airport()
	g.RadiusM = 300
	if _, err := s.PutGeofence(ctx, g); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Geofence(ctx, "egll"); got.RadiusM != 300 {
		t.Errorf("a write after the recreation did not apply: radius %g, want 300", got.RadiusM)
	}
}

// TestStoredPolygonsArePrepared: every zone version the store serves
// carries its polygon index (issue 23), so a sweep does not scan every
// edge of a large zone for every track sample.
func TestStoredPolygonsArePrepared(t *testing.T) {
	c := gate.Point{Lat: 51.5, Lon: -0.2}
	var ring [][]float64
	for k := range 99 {
		p := gate.Destination(c, 1000, float64(k)*360/99)
		ring = append(ring, []float64{p.Lon, p.Lat})
	}
	big := gate.Geofence{ID: "big", Class: gate.ClassPrison,
		Polygon: &gate.Polygon{Type: "Polygon", Coordinates: [][][]float64{append(ring, ring[0])}}}
	s := open(t, connect(t, startServer(t)), Config{Geofences: []gate.Geofence{big}})
	g, ok, _ := s.Geofence(context.Background(), "big")
	if !ok || !g.Prepared() {
		t.Fatalf("stored zone found %v, prepared %v", ok, g.Prepared())
	}
	if d := g.SignedDistance(c); math.Abs(d+1000) > 1 {
		t.Fatalf("centre is %v m from the edge, want about -1000", d)
	}
}

// TestVersionsOutliveTheBucket: a zone's earlier version, named by
// receipts, lived only in the bucket, so a bucket deleted behind cuasd's
// back came back with the current versions alone (issue 23: a receipt
// must stay verifiable). With VersionDir each store keeps every version it
// sees, its own and those another instance stored, and a recreation
// writes them back.
func TestVersionsOutliveTheBucket(t *testing.T) {
	ns := startServer(t)
	ctx := context.Background()
	js := connect(t, ns)
	a := open(t, js, Config{VersionDir: t.TempDir()})
	b := open(t, connect(t, ns), Config{VersionDir: t.TempDir()})
	old := airport()
	if _, err := a.PutGeofence(ctx, old); err != nil {
		t.Fatal(err)
	}
	now := airport()
	now.RadiusM = 8000
	if _, err := a.PutGeofence(ctx, now); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if g, ok := b.Snapshot().Geofence(now.ID); ok && g.RadiusM == now.RadiusM {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the other instance never saw the change")
		}
	}
	if err := js.DeleteKeyValue(ctx, bus.BucketZones); err != nil {
		t.Fatal(err)
	}
	if g, ok, err := b.Version(ctx, old.Digest()); err != nil || !ok || g.RadiusM != old.RadiusM {
		t.Errorf("with the bucket gone, the old version from disk: %+v %v %v", g, ok, err)
	}
	if err := b.Recreate(ctx); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, bus.BucketZones)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, versionPrefix+old.Digest()); err != nil {
		t.Errorf("the old version was not written back: %v", err)
	}
	plain := open(t, js, Config{})
	if g, ok, err := plain.Version(ctx, old.Digest()); err != nil || !ok || g.RadiusM != old.RadiusM {
		t.Errorf("the old version from the recreated bucket: %+v %v %v", g, ok, err)
	}
}

// leaderless is a bucket whose first writes no stream answers: a
// replicated bucket a forming cluster has just created, whose group has
// no leader yet (make faults saw cuasd exit on it at start).
type leaderless struct {
	*bus.KV
	unanswered int
}

func (l *leaderless) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if l.unanswered > 0 {
		l.unanswered--
		return 0, jetstream.ErrNoStreamResponse
	}
	return l.KV.Create(ctx, key, value)
}

// TestSeedWaitsForANewBucketsLeader: with Setup (cuasd passes bus.Setup's
// Do) the seeding is retried until the bucket answers, and every seeded
// zone is there; without it the first unanswered write fails Open.
func TestSeedWaitsForANewBucketsLeader(t *testing.T) {
	js := connect(t, startServer(t))
	cfg := Config{Geofences: []gate.Geofence{airport(), prison()}, Logger: quiet()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := Open(ctx, &leaderless{KV: bucket(t, js, cfg), unanswered: 1}, cfg); !errors.Is(err, jetstream.ErrNoStreamResponse) {
		t.Fatalf("without Setup: %v, want the unanswered write's error", err)
	}
	cfg.Setup = bus.Setup{Log: quiet()}.Do
	s, err := Open(ctx, &leaderless{KV: bucket(t, js, cfg), unanswered: 3}, cfg)
	if err != nil {
		t.Fatalf("with Setup: %v", err)
	}
	defer s.Close()
	if got, _ := s.Geofences(ctx); !slices.Equal(ids(got), []string{"egll", "hmp-1"}) {
		t.Fatalf("seeded geofences %v, want egll and hmp-1", ids(got))
	}
}
