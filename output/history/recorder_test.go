package history_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/history"
)

var t0 = time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)

func f64(v float64) *float64 { return &v }

// upReporter says when the recorder has subscribed.
type upReporter struct{ up chan struct{} }

func (r upReporter) Up() {
	select {
	case r.up <- struct{}{}:
	default:
	}
}
func (upReporter) Retrying(error) {}

// runRecorder runs a recorder on nc until the returned stop is called.
func runRecorder(t *testing.T, nc *nats.Conn, path string) (*history.Recorder, func()) {
	t.Helper()
	rec := history.New(history.Config{Path: path, FlushEvery: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	rep := upReporter{up: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx, output.Conn(nc), rep) }()
	select {
	case <-rep.up:
	case err := <-done:
		t.Fatalf("recorder stopped: %v", err)
	}
	return rec, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("recorder: %v", err)
		}
	}
}

// trackEvent is what the gate publishes for a track: the positions since
// its previous event in history, and its current state.
func trackEvent(t *testing.T, typ string, id string, pts []events.Point, as *events.Assessment) []byte {
	t.Helper()
	last := pts[len(pts)-1]
	ev := events.TrackEvent{
		Header: events.Header{V: events.Version, Type: typ, Time: last.T.Add(time.Second), Instance: "test"},
		Track: events.Track{TrackID: id, Protocols: []string{"adsb"}, ICAO: "4CA1FA", Lat: f64(last.Lat), Lon: f64(last.Lon),
			AltM: last.AltM, AltKind: "barometric", SpeedMps: f64(120), HeadingDeg: f64(45), VRateMps: f64(-2.5),
			Sensors: []string{"rx1"}, FirstSeen: pts[0].T, LastSeen: last.T, Observations: 10, History: pts},
		Assessment: as,
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	eventstest.Validate(t, bus.TrackSubject("adsb", "4CA1FA"), b)
	return b
}

// waitPoints waits until the recorder has stored n points of id.
func waitPoints(t *testing.T, rec *history.Recorder, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := rec.Count(context.Background(), id, time.Unix(0, 0), t0.Add(24*time.Hour))
		if err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorder stored %d points of %s (%v), want %d", got, id, err, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEventsToExport follows track events from NATS through the recorder
// to the HTTP exports, and through a restart of the recorder on the same
// file.
func TestEventsToExport(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	path := filepath.Join(t.TempDir(), "history.db")
	rec, stop := runRecorder(t, nc, path)

	// Three events of 4 positions each (2 a second); the second repeats
	// the first's last point, as a keep-alive would.
	var all []events.Point
	for i := 0; i < 12; i++ {
		all = append(all, events.Point{T: t0.Add(time.Duration(i) * 500 * time.Millisecond), Lat: 30 + float64(i)*0.01, Lon: 120 + float64(i)*0.01, AltM: f64(1000 + float64(i))})
	}
	subj := bus.TrackSubject("adsb", "4CA1FA")
	must(t, nc.Publish(subj, trackEvent(t, events.TypeTrackUpdate, "adsb:4CA1FA", all[0:4], nil)))
	must(t, nc.Flush())
	waitPoints(t, rec, "adsb:4CA1FA", 4)
	// Threat and track events arrive on two subscriptions, so which comes
	// first is not fixed: which points take the threat's decision is
	// tested on pointsOf, here only that it does not disturb the rest.
	must(t, nc.Publish(bus.ThreatSubject("adsb", "4CA1FA"), threatEvent(t, "adsb:4CA1FA", "alert", 0.6)))
	must(t, nc.Publish(subj, trackEvent(t, events.TypeTrackUpdate, "adsb:4CA1FA", all[3:8], nil)))
	must(t, nc.Publish(subj, trackEvent(t, events.TypeTrackUpdate, "adsb:4CA1FA", all[8:12],
		&events.Assessment{Decision: "intercept-recommended", Lambda: 0.9, HumanDecision: true, Caps: []string{}})))
	must(t, nc.Publish(bus.TrackSubject("adsb", "000001"), []byte(`{"v":99,"type":"track.update"}`))) // ignored
	must(t, nc.Flush())
	waitPoints(t, rec, "adsb:4CA1FA", 12)

	h := httpapi.NewServer(httpapi.Deps{History: rec, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	body := get(t, h, "/api/cuas/v1/tracks/adsb:4CA1FA/history")
	var got struct {
		Points []struct {
			Time     time.Time `json:"time"`
			Lat      float64   `json:"lat"`
			Speed    *float64  `json:"speed_mps"`
			Decision string    `json:"decision"`
			Protocol string    `json:"protocol"`
		} `json:"points"`
		Count int `json:"count"`
	}
	must(t, json.Unmarshal(body, &got))
	if got.Count != 12 {
		t.Fatalf("%d points, want 12: %s", got.Count, body)
	}
	for i, p := range got.Points {
		if !p.Time.Equal(all[i].T) || p.Lat != all[i].Lat || p.Protocol != "adsb" {
			t.Fatalf("point %d %+v, want %+v", i, p, all[i])
		}
	}
	// Decisions: none before any threat event, the event's own assessment
	// on its points; speed only on each event's newest point.
	if got.Points[0].Decision != "" || got.Points[11].Decision != "intercept-recommended" {
		t.Fatalf("decisions %q %q", got.Points[0].Decision, got.Points[11].Decision)
	}
	if got.Points[7].Speed == nil || got.Points[6].Speed != nil {
		t.Fatalf("speed on point 6 %v, 7 %v; want it on the event's newest point only", got.Points[6].Speed, got.Points[7].Speed)
	}

	kml := get(t, h, "/api/cuas/v1/tracks/adsb:4CA1FA/history?format=kml")
	var doc struct {
		Placemark struct {
			StyleURL string `xml:"http://www.opengis.net/kml/2.2 styleUrl"`
			Track    struct {
				When []string `xml:"http://www.opengis.net/kml/2.2 when"`
			} `xml:"http://www.google.com/kml/ext/2.2 Track"`
		} `xml:"http://www.opengis.net/kml/2.2 Document>Placemark"`
	}
	must(t, xml.Unmarshal(kml, &doc))
	if doc.Placemark.StyleURL != "#decision-intercept-recommended" || len(doc.Placemark.Track.When) != 12 {
		t.Fatalf("KML placemark %+v", doc.Placemark)
	}

	// Restart on the same file: the points are still there, new ones add.
	stop()
	rec2, stop2 := runRecorder(t, nc, path)
	defer stop2()
	more := []events.Point{{T: t0.Add(10 * time.Second), Lat: 31, Lon: 121}}
	must(t, nc.Publish(subj, trackEvent(t, events.TypeTrackUpdate, "adsb:4CA1FA", more, nil)))
	must(t, nc.Flush())
	waitPoints(t, rec2, "adsb:4CA1FA", 13)
	h2 := httpapi.NewServer(httpapi.Deps{History: rec2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if body := get(t, h2, "/api/cuas/v1/tracks/adsb:4CA1FA/history?format=csv"); strings.Count(string(body), "\r\n") != 14 {
		t.Fatalf("after restart, CSV:\n%s\nwant a header and 13 rows", body)
	}
}

func threatEvent(t *testing.T, id, decision string, lambda float64) []byte {
	t.Helper()
	b, err := json.Marshal(events.ThreatEvent{
		Header: events.Header{V: events.Version, Type: events.TypeThreat, Time: t0, Instance: "test"},
		Reason: "decision_changed", PreviousDecision: "monitor",
		Threat: events.Threat{TrackID: id, Protocols: []string{"adsb"}, Lat: 30, Lon: 120, Lambda: lambda, Decision: decision,
			HumanDecision: true, Caps: []string{}, Sensors: []string{"rx1"}, FirstSeen: t0, LastSeen: t0},
	})
	if err != nil {
		t.Fatal(err)
	}
	eventstest.Validate(t, bus.ThreatSubject("adsb", "4CA1FA"), b)
	return b
}

func get(t *testing.T, h http.Handler, path string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRecorderNATS is the recorder's whole cost as cuasd pays it:
// track events of 2,000 tracks (two fixes each) published on an
// in-process NATS, delivered to the recorder's subscription, decoded,
// queued and committed; it ends when every point is stored.
func BenchmarkRecorderNATS(b *testing.B) {
	srv := natstest.Start(b)
	nc := srv.Connect(b)
	rec := history.New(history.Config{Path: filepath.Join(b.TempDir(), "history.db"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	rep := upReporter{up: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx, output.Conn(nc), rep) }()
	<-rep.up
	const tracks = 2000
	msgs := make([][]byte, tracks)
	subjects := make([]string, tracks)
	for i := range msgs {
		key := fmt.Sprintf("%06X", i)
		subjects[i] = bus.TrackSubject("adsb", key)
		msgs[i] = []byte(`{"v":1,"type":"track.update","time":"2026-11-26T05:00:00Z","instance":"b","track":{"track_id":"adsb:` + key +
			`","protocols":["adsb"],"icao":"` + key + `","lat":51.5,"lon":-0.1,"alt_m":10000,"alt_kind":"baro","speed_mps":230,"heading_deg":90,"vertical_rate_mps":0,` +
			`"sensors":["rx1"],"first_seen":"2026-11-26T05:00:00Z","last_seen":"2026-11-26T05:00:00Z","observations":100,` +
			`"history":[{"t":"%s","lat":51.5,"lon":-0.1,"alt_m":10000},{"t":"%s","lat":51.5,"lon":-0.099,"alt_m":10000}]},` +
			`"assessment":{"decision":"monitor","lambda":0.12,"human_decision_required":true,"breach":false,"caps":[],"allow_listed":false}}`)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Each round of events is one second later.
		ts := t0.Add(time.Duration(i/tracks) * time.Second)
		body := fmt.Sprintf(string(msgs[i%tracks]), ts.Format(time.RFC3339Nano), ts.Add(500*time.Millisecond).Format(time.RFC3339Nano))
		if err := nc.Publish(subjects[i%tracks], []byte(body)); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			_ = nc.Flush() // let the subscription keep up, as paced live traffic does
		}
	}
	_ = nc.Flush()
	// One subscription and one writer keep the events' order: when the
	// last event's points are stored, every earlier one's are.
	last, want := fmt.Sprintf("adsb:%06X", (b.N-1)%tracks), 2*((b.N-1)/tracks+1)
	for {
		n, _ := rec.Count(context.Background(), last, t0, t0.Add(1e6*time.Hour))
		if n >= want || rec.Dropped() > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	if rec.Dropped() > 0 {
		b.Fatalf("%d events dropped", rec.Dropped())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/point")
	cancel()
	<-done
}

// feed is an output.TrackFeed as the gate offers it in cuasd serve.
type feed struct {
	fn      chan func(string, *events.TrackEvent)
	stopped chan struct{}
}

func (f *feed) FeedTracks(fn func(string, *events.TrackEvent)) (func(), error) {
	f.fn <- fn
	return func() { close(f.stopped) }, nil
}

// TestRecordsFedTrackEvents: inside cuasd serve the recorder takes the
// gate's typed track events (output.TrackFeed) and not cuas.track.> from
// NATS, which would record each event twice; it keeps nothing the event
// points to (the gate's to reuse); it stops the feed when it stops.
func TestRecordsFedTrackEvents(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	f := &feed{fn: make(chan func(string, *events.TrackEvent), 1), stopped: make(chan struct{})}
	rec := history.New(history.Config{Path: filepath.Join(t.TempDir(), "history.db"), FlushEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	rep := upReporter{up: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx, output.InProcess(nc, f, nil, nil), rep) }()
	fn := <-f.fn
	<-rep.up

	alt := 1000.0
	pts := []events.Point{{T: t0, Lat: 30, Lon: 120, AltM: &alt}, {T: t0.Add(time.Second), Lat: 30.001, Lon: 120.001, AltM: &alt}}
	ev := events.TrackEvent{Header: events.Header{V: events.Version, Type: events.TypeTrackUpdate, Time: t0.Add(2 * time.Second)},
		Track:      events.Track{TrackID: "adsb:4CA1FA", AltKind: "barometric", SpeedMps: f64(120), Sensors: []string{"rx1"}, History: pts},
		Assessment: &events.Assessment{Decision: "alert", Lambda: 0.5}}
	fn(bus.TrackSubject("adsb", "4CA1FA"), &ev)
	// The gate reuses what it fed: the recorded points must not change.
	alt, *ev.Track.SpeedMps, ev.Assessment.Lambda, pts[0].Lat = -1, -1, -1, -1
	// The same positions published on NATS are not heard.
	must(t, nc.Publish(bus.TrackSubject("adsb", "4CA1FA"), trackEvent(t, events.TypeTrackUpdate, "adsb:4CA1FA",
		[]events.Point{{T: t0.Add(3 * time.Second), Lat: 31, Lon: 121}}, nil)))
	must(t, nc.Flush())
	waitPoints(t, rec, "adsb:4CA1FA", 2)
	time.Sleep(100 * time.Millisecond) // five flushes: time for a NATS event to be stored, were it heard

	var got []history.Point
	n, err := rec.Track(context.Background(), history.TrackQuery{ID: "adsb:4CA1FA", From: t0.Add(-time.Hour), To: t0.Add(time.Hour)},
		func(p *history.Point) error { got = append(got, *p); return nil })
	if err != nil || n != 2 || len(got) != 2 {
		t.Fatalf("%d points (%v), want the 2 fed", n, err)
	}
	p0, p1 := got[0], got[1]
	if p0.Lat != 30 || p0.AltM == nil || *p0.AltM != 1000 || p1.SpeedMps == nil || *p1.SpeedMps != 120 ||
		p1.Lambda == nil || *p1.Lambda != 0.5 || p1.Decision != "alert" || p1.Protocol != "adsb" || p1.Sensor != "rx1" {
		t.Fatalf("recorded %+v / %+v", p0, p1)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.stopped:
	default:
		t.Fatal("the recorder stopped without stopping its feed")
	}
}

// fixFeed is an output.FixFeed a test drives.
type fixFeed struct{ fn chan func(*output.Fix) }

func (f *fixFeed) FeedFixes(fn func(*output.Fix)) (func(), error) {
	f.fn <- fn
	return func() {}, nil
}

// TestRecordsEveryFedFix (issue 30): with fusion's fixes fed, every fix is
// a point, however many arrive between two track events (which used to
// carry at most the track's last 32) and however close their times (a
// burst's fixes share their arrival: each later one moves 1 ns on); the
// fed track events only lend their decision. A full fix queue drops and
// counts.
func TestRecordsEveryFedFix(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	tf := &feed{fn: make(chan func(string, *events.TrackEvent), 1), stopped: make(chan struct{})}
	ff := &fixFeed{fn: make(chan func(*output.Fix), 1)}
	reg := prometheus.NewRegistry()
	rec := history.New(history.Config{Path: filepath.Join(t.TempDir(), "history.db"), FlushEvery: 20 * time.Millisecond,
		FixQueueLen: 500, Registry: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := upReporter{up: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx, output.InProcess(nc, tf, ff, nil), rep) }()
	onFix, onTrack := <-ff.fn, <-tf.fn
	<-rep.up
	onTrack(bus.TrackSubject("adsb", "4CA1FA"), &events.TrackEvent{Header: events.Header{V: events.Version, Type: events.TypeTrackUpdate, Time: t0},
		Track:      events.Track{TrackID: "adsb:4CA1FA", History: []events.Point{{T: t0, Lat: 1, Lon: 1}}},
		Assessment: &events.Assessment{Decision: "alert", Lambda: 0.5}})
	for i := range 400 {
		f := output.Fix{TrackID: "adsb:4CA1FA", Protocol: "adsb", Sensor: "rx1", UnixNano: t0.UnixNano() + int64(i/100)*int64(time.Second),
			Lat: 30 + float64(i)*1e-4, Lon: 120, HasAlt: true, AltM: 1000, AltKind: "baro"}
		onFix(&f)
	}
	waitPoints(t, rec, "adsb:4CA1FA", 400)
	var got []history.Point
	_, err := rec.Track(context.Background(), history.TrackQuery{ID: "adsb:4CA1FA", From: t0.Add(-time.Hour), To: t0.Add(time.Hour)},
		func(p *history.Point) error { got = append(got, *p); return nil })
	if err != nil || len(got) != 400 {
		t.Fatalf("%d points (%v), want the 400 fed fixes (and not the track event's)", len(got), err)
	}
	for i, p := range got {
		if math.Abs(p.Lat-(30+float64(i)*1e-4)) > 1e-9 || (i > 0 && !p.Time.After(got[i-1].Time)) || p.Decision != "alert" || p.AltM == nil {
			t.Fatalf("point %d: %+v", i, p)
		}
	}
	// More than the queue holds before the writer takes them: the rest
	// is counted.
	cancel()
	<-done
	for range 600 {
		onFix(&output.Fix{TrackID: "adsb:4CA1FA", UnixNano: t0.UnixNano()})
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	dropped := -1.0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "cuasd_history_points_total" && m.GetLabel()[0].GetValue() == "dropped" {
				dropped = m.GetCounter().GetValue()
			}
		}
	}
	if dropped != 100 {
		t.Errorf("%v fixes counted dropped, want the 100 past a 500-fix queue", dropped)
	}
}

// TestRecordsABurstOfFedFixes: thousands of fixes of interleaved tracks
// fed between two flushes (a burst; the writer commits them 2,048 at a
// time) are all stored, each track's in order.
func TestRecordsABurstOfFedFixes(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	tf := &feed{fn: make(chan func(string, *events.TrackEvent), 1), stopped: make(chan struct{})}
	ff := &fixFeed{fn: make(chan func(*output.Fix), 1)}
	rec := history.New(history.Config{Path: filepath.Join(t.TempDir(), "history.db"), FlushEvery: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := upReporter{up: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx, output.InProcess(nc, tf, ff, nil), rep) }()
	onFix := <-ff.fn
	<-tf.fn
	<-rep.up
	const tracks, each = 3, 2000
	ids := [tracks]string{"adsb:AAAAA1", "adsb:AAAAA2", "adsb:AAAAA3"}
	for i := range each {
		for k, id := range ids {
			onFix(&output.Fix{TrackID: id, Protocol: "adsb", Sensor: "rx1", UnixNano: t0.UnixNano() + int64(i)*int64(time.Millisecond),
				Lat: float64(k) + float64(i)*1e-5, Lon: 120})
		}
	}
	for k, id := range ids {
		waitPoints(t, rec, id, each)
		var got []history.Point
		if _, err := rec.Track(context.Background(), history.TrackQuery{ID: id, From: t0.Add(-time.Hour), To: t0.Add(time.Hour)},
			func(p *history.Point) error { got = append(got, *p); return nil }); err != nil || len(got) != each {
			t.Fatalf("%s: %d points (%v), want %d", id, len(got), err, each)
		}
		for i, p := range got {
			if math.Abs(p.Lat-(float64(k)+float64(i)*1e-5)) > 1e-9 || !p.Time.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
				t.Fatalf("%s point %d: %+v", id, i, p)
			}
		}
	}
	cancel()
	<-done
}

// TestAttachedFixesBeforeRun (issue 30): fixes fed after AttachFixes but
// before Run (cuasd serve attaches the recorder when it creates the
// track store; the fusion feed may fuse a replayed capture before the
// outputs run) are recorded once Run starts, and Run does not subscribe
// a second time.
func TestAttachedFixesBeforeRun(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	ff := &fixFeed{fn: make(chan func(*output.Fix), 2)}
	rec := history.New(history.Config{Path: filepath.Join(t.TempDir(), "history.db"), FlushEvery: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := rec.AttachFixes(ff); err != nil {
		t.Fatal(err)
	}
	onFix := <-ff.fn
	for i := range 50 {
		onFix(&output.Fix{TrackID: "adsb:4CA1FA", Protocol: "adsb", Sensor: "rx1", UnixNano: t0.UnixNano() + int64(i)*int64(time.Second), Lat: 30 + float64(i)*1e-3, Lon: 120})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tf := &feed{fn: make(chan func(string, *events.TrackEvent), 1), stopped: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- rec.Run(ctx, output.InProcess(nc, tf, ff, nil), upReporter{up: make(chan struct{}, 1)})
	}()
	<-tf.fn
	waitPoints(t, rec, "adsb:4CA1FA", 50)
	select {
	case <-ff.fn:
		t.Error("Run subscribed to the fixes again after AttachFixes")
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
