package board

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/internal/natstest"
)

// fed is one event handed to a track feed.
type fed struct {
	subject, typ, id string
	fixes            int
}

// TestFeedTracks: a track feed hears every live track's events — the
// owned ones this instance publishes and, without their being published,
// the ones another instance owns — with the positions since the previous
// fed event, and their losses; a track taken over is published at once
// with every position it holds; after stop nothing more is fed.
func TestFeedTracks(t *testing.T) {
	owned := map[string]bool{"rid:A": true}
	b, st, c, log := newFedGate(t, func(id string) bool { return owned[id] })
	var got []fed
	stop, err := b.FeedTracks(func(subject string, ev *events.TrackEvent) {
		got = append(got, fed{subject, ev.Type, ev.Track.TrackID, len(ev.Track.History)})
	})
	if err != nil {
		t.Fatal(err)
	}
	place := func(id string, lat float64) {
		o := ridObs(id, lat, 4, c.t.UnixNano())
		st.Apply(&o)
	}
	sweep := func() (fedNow []fed, published []gotEvent) {
		got = nil
		b.Sweep(context.Background())
		return got, log.drain()
	}

	c.t = c.t.Add(time.Second)
	place("A", 52)
	place("X", 53)
	place("Y", 54)
	f, pub := sweep()
	if len(f) != 3 || len(only(pub, events.TypeTrackUpdate)) != 1 || pub[0].subject != "cuas.track.remoteid.A" {
		t.Fatalf("first sweep: fed %+v, published %d events (%v)", f, len(pub), pub)
	}

	// X, owned by another instance, moves twice: its next fed event
	// carries those two positions, and nothing is published for it.
	c.t = c.t.Add(500 * time.Millisecond)
	place("X", 53.0001)
	c.t = c.t.Add(600 * time.Millisecond)
	place("X", 53.0002)
	place("A", 52.0001)
	place("Y", 54.0001)
	f, pub = sweep()
	if x := find(f, "rid:X"); x == nil || x.typ != events.TypeTrackUpdate || x.fixes != 2 {
		t.Fatalf("second sweep: X fed %+v, want an update with 2 fixes (all fed: %+v)", x, f)
	}
	for _, e := range pub {
		if e.subject != "cuas.track.remoteid.A" {
			t.Fatalf("published %s, which another instance owns", e.subject)
		}
	}

	// This instance takes X over: X is published at once, with all four
	// positions it holds, as by a new owner; the feed gets the one it
	// did not have.
	owned["rid:X"] = true
	c.t = c.t.Add(100 * time.Millisecond)
	place("X", 53.0003)
	f, pub = sweep()
	xs := where(pub, func(e gotEvent) bool { return e.subject == "cuas.track.remoteid.X" })
	var xev events.TrackEvent
	if len(xs) != 1 || json.Unmarshal(xs[0].raw, &xev) != nil || len(xev.Track.History) != 4 {
		t.Fatalf("take-over: %d events published for X (%+v), want 1 with the 4 positions X holds", len(xs), xs)
	}
	if x := find(f, "rid:X"); x == nil || x.fixes != 1 {
		t.Fatalf("take-over: X fed %+v, want the 1 new position", x)
	}

	// X and Y are lost: X's loss is published (owned now), Y's only fed.
	for range 70 {
		c.t = c.t.Add(time.Second)
		place("A", 52.0001)
	}
	f, pub = sweep()
	lost := only(pub, events.TypeTrackLost)
	if len(lost) != 1 || lost[0].subject != "cuas.track.remoteid.X" {
		t.Fatalf("losses published: %+v, want X's only", lost)
	}
	if x, y := find(f, "rid:X"), find(f, "rid:Y"); x == nil || y == nil || x.typ != events.TypeTrackLost || y.typ != events.TypeTrackLost {
		t.Fatalf("losses fed: %+v", f)
	}

	stop()
	stop() // twice is harmless
	c.t = c.t.Add(2 * time.Second)
	place("A", 52.0002)
	if f, _ := sweep(); len(f) != 0 {
		t.Fatalf("fed after stop: %+v", f)
	}
}

func TestFeedTracksWithoutEvents(t *testing.T) {
	b := New(Config{Store: newTestStore(&clock{time.Unix(1_700_000_000, 0)})}, nil)
	if _, err := b.FeedTracks(func(string, *events.TrackEvent) {}); !errors.Is(err, ErrNoEvents) {
		t.Fatalf("FeedTracks on a gate that announces nothing: %v, want ErrNoEvents", err)
	}
}

func find(fs []fed, id string) *fed {
	for i := range fs {
		if fs[i].id == id {
			return &fs[i]
		}
	}
	return nil
}

// newFedGate is a gate publishing on a test NATS server (owns nil: every
// track is its own), its track store and clock, and the log of what it
// publishes.
func newFedGate(t *testing.T, owns func(string) bool) (*Gate, *fusion.Store, *clock, *eventLog) {
	t.Helper()
	s := natstest.Start(t)
	log := newEventLog(t, s)
	c := &clock{time.Unix(1_700_000_000, 0)}
	st := newTestStore(c)
	return New(Config{Store: st, Now: c.now, Events: s.Conn, Instance: "a", Owns: owns}, prometheus.NewRegistry()), st, c, log
}

// TestFeedKeepsUpWithFastTracks: a track sending 50 positions a second —
// more than its 32-position ring holds between two of its events (at most
// one a second) — loses positions on NATS (counted), but the feed gets
// every one exactly once, handed to it before the ring overflows.
func TestFeedKeepsUpWithFastTracks(t *testing.T) {
	b, st, c, log := newFedGate(t, nil)
	var fedTimes []int64
	stop, err := b.FeedTracks(func(_ string, ev *events.TrackEvent) {
		for _, p := range ev.Track.History {
			fedTimes = append(fedTimes, p.T.UnixNano())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var sent []int64
	published := 0
	for range 12 { // 6 s of sweeps every 500 ms
		for range 25 {
			c.t = c.t.Add(20 * time.Millisecond)
			o := ridObs("M", 52+float64(len(sent))*1e-5, 4, c.t.UnixNano())
			st.Apply(&o)
			sent = append(sent, c.t.UnixNano())
		}
		b.Sweep(context.Background())
		for _, e := range only(log.drain(), events.TypeTrackUpdate) {
			var ev events.TrackEvent
			if err := json.Unmarshal(e.raw, &ev); err != nil {
				t.Fatal(err)
			}
			published += len(ev.Track.History)
		}
	}
	if len(fedTimes) != len(sent) {
		t.Fatalf("fed %d positions, want all %d sent", len(fedTimes), len(sent))
	}
	for i := range sent {
		if fedTimes[i] != sent[i] {
			t.Fatalf("fed position %d at %d, want %d (in order, each once)", i, fedTimes[i], sent[i])
		}
	}
	if published >= len(sent) {
		t.Fatalf("NATS events carried %d of %d positions: the test needs a track faster than the ring", published, len(sent))
	}
	// Counted unannounced: those the events missed, less those since the
	// last event, which the next may still carry.
	if un, unfed := testutil.ToFloat64(b.ann.unannounced), testutil.ToFloat64(b.ann.unfed); un < 1 || un > float64(len(sent)-published) || unfed != 0 {
		t.Fatalf("counted %v unannounced (want 1…%d), %v unfed (want 0)", un, len(sent)-published, unfed)
	}

	// Faster than the feed can keep up with: 40 positions between two
	// sweeps, 8 of which the ring no longer holds at the sweep.
	before := len(fedTimes)
	for i := range 40 {
		c.t = c.t.Add(10 * time.Millisecond)
		o := ridObs("M", 52+float64(len(sent))*1e-5+float64(i+1)*5e-6, 4, c.t.UnixNano())
		st.Apply(&o)
	}
	b.Sweep(context.Background())
	if fed, unfed := len(fedTimes)-before, testutil.ToFloat64(b.ann.unfed); fed != 32 || unfed != 8 {
		t.Fatalf("fed %d of 40 positions, %v counted unfed; want 32 and 8", fed, unfed)
	}
}
