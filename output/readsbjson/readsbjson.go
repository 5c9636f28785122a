// Package readsbjson writes the JSON documents of readsb and dump1090-fa
// (--write-json): aircraft.json, receiver.json, stats.json and the rolling
// history_N.json files that tar1090 draws trails from, every second, to a
// directory (atomically: a temporary file renamed into place) and for the
// HTTP API ({base}/data/*.json). Aircraft come from the track events
// (cuas.track.>); drones (Remote ID, MAVLink) are listed beside them as
// non-ICAO entries ("~" and 6 hex digits of a hash of the track id, type
// "other"), so tar1090 shows them on the same map.
package readsbjson

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
)

// Error is the error type of package readsbjson.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "readsbjson: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Config configures a Writer.
type Config struct {
	// Dir receives the files; empty serves them over HTTP only.
	Dir string
	// Drones lists Remote ID and MAVLink tracks beside the aircraft.
	Drones bool
	// Simulated lists simulated tracks (--demo-outputs; issue 34), each
	// marked "simulated": true; without it a feeder never forwards them.
	Simulated bool
	// Lat and Lon are the receiver's position for receiver.json (tar1090
	// centres the map on it and draws range rings); nil leaves them out.
	Lat, Lon *float64
	// Version is written to receiver.json.
	Version string
	Log     *slog.Logger
	// Interval is how often the documents are written (1 s, as readsb).
	Interval time.Duration
	// Frames counts each aircraft's messages and signal level (rssi) from
	// the raw Mode S frames (cuas.raw.adsb.>), as readsb does, instead of
	// the track's observations, which leave out the messages that change
	// nothing (DF11 all-call replies).
	Frames bool
	// HistoryEvery and HistoryLen: a history_N.json snapshot every 30 s,
	// the last 120 kept (an hour of trails), as readsb.
	HistoryEvery time.Duration
	HistoryLen   int
}

// staleAfter drops a track whose events stopped without a track.lost (the
// publisher repeats a live track every events.KeepAlive).
const staleAfter = events.KeepAlive + events.MinInterval + 5*time.Second

type entry struct {
	t     events.Track
	heard time.Time
}

// Writer is the readsb JSON output. It implements output.Output and serves
// its documents (Document) to the HTTP API.
type Writer struct {
	cfg Config

	mu       sync.Mutex
	tracks   map[string]*entry
	docs     map[string][]byte
	stats    stats
	histN    int // history snapshots taken
	lastHist time.Time

	frames      *frameCounter // nil unless cfg.Frames
	framesTotal uint64        // frames.total at the last Flush
}

// New returns a Writer, creating cfg.Dir when set.
func New(cfg Config) (*Writer, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.HistoryEvery <= 0 {
		cfg.HistoryEvery = 30 * time.Second
	}
	if cfg.HistoryLen <= 0 {
		cfg.HistoryLen = 120
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, &Error{Op: "json dir", Err: err}
		}
	}
	w := &Writer{cfg: cfg, tracks: map[string]*entry{}, docs: map[string][]byte{}}
	if cfg.Frames {
		w.frames = &frameCounter{}
	}
	w.docs["receiver.json"] = w.receiver()
	return w, nil
}

// Name implements output.Output.
func (w *Writer) Name() string {
	if w.cfg.Dir == "" {
		return "readsb-json http"
	}
	return "readsb-json " + w.cfg.Dir
}

// Document returns the current document of that name (aircraft.json,
// receiver.json, stats.json, history_N.json).
func (w *Writer) Document(name string) ([]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.docs[name]
	return d, ok
}

// Run implements output.Output.
func (w *Writer) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	unsub, err := ev.Subscribe(bus.TrackPrefix+".>", func(m *nats.Msg) { w.handle(m.Data, time.Now()) })
	if err != nil {
		return &Error{Op: "subscribe", Err: err}
	}
	defer unsub()
	if w.frames != nil {
		unsubRaw, err := ev.Subscribe(bus.RawPrefix+".adsb.>", func(m *nats.Msg) {
			if w.cfg.Simulated || !bus.Simulated(m.Header) {
				w.frames.add(m, time.Now().UnixNano())
			}
		})
		if err != nil {
			return &Error{Op: "subscribe", Err: err}
		}
		defer unsubRaw()
	}
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	if err := w.Flush(time.Now()); err != nil {
		return err
	}
	rep.Up()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			if err := w.Flush(now); err != nil {
				rep.Retrying(err)
				w.cfg.Log.Warn("readsb json", "err", err)
				continue
			}
			rep.Up()
		}
	}
}

// handle takes one track event.
func (w *Writer) handle(data []byte, now time.Time) {
	h, err := events.Peek(data)
	if err != nil {
		return
	}
	var ev events.TrackEvent
	if err := json.Unmarshal(data, &ev); err != nil || ev.Track.TrackID == "" {
		return
	}
	if !w.cfg.Drones && !isADSB(&ev.Track) || ev.Track.Simulated && !w.cfg.Simulated {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	id := ev.Track.TrackID
	if h.Type == events.TypeTrackLost {
		delete(w.tracks, id)
		return
	}
	if h.Type != events.TypeTrackUpdate {
		return
	}
	e := w.tracks[id]
	if e == nil {
		e = &entry{}
		w.tracks[id] = e
		w.stats.cur.tracks++
	}
	w.stats.count(&e.t, &ev.Track, w.frames == nil || !isADSB(&ev.Track))
	e.t, e.heard = ev.Track, now
}

// Flush rebuilds the documents as of now and writes them to the directory.
func (w *Writer) Flush(now time.Time) error {
	w.mu.Lock()
	for id, e := range w.tracks {
		if now.Sub(e.heard) > staleAfter {
			delete(w.tracks, id)
		}
	}
	if w.frames != nil {
		w.frames.sweep()
		total := w.frames.totalMessages()
		w.stats.addMessages(total - w.framesTotal)
		w.framesTotal = total
	}
	ac := w.aircraft(now)
	w.docs["aircraft.json"] = ac
	w.stats.roll(now)
	w.docs["stats.json"] = w.stats.json(now)
	write := []string{"aircraft.json", "stats.json"}
	if w.histN == 0 || now.Sub(w.lastHist) >= w.cfg.HistoryEvery {
		name := "history_" + strconv.Itoa(w.histN%w.cfg.HistoryLen) + ".json"
		w.docs[name] = ac
		w.histN++
		w.lastHist = now
		w.docs["receiver.json"] = w.receiver()
		write = append(write, name, "receiver.json")
	}
	docs := make([][]byte, len(write))
	for i, n := range write {
		docs[i] = w.docs[n]
	}
	w.mu.Unlock()
	if w.cfg.Dir == "" {
		return nil
	}
	for i, n := range write {
		if err := writeAtomic(w.cfg.Dir, n, docs[i]); err != nil {
			return &Error{Op: "write " + n, Err: err}
		}
	}
	return nil
}

// aircraft builds aircraft.json; w.mu is held.
func (w *Writer) aircraft(now time.Time) []byte {
	list := make([]*events.Track, 0, len(w.tracks))
	for _, e := range w.tracks {
		list = append(list, &e.t)
	}
	slices.SortFunc(list, func(a, b *events.Track) int {
		if a.TrackID < b.TrackID {
			return -1
		}
		return 1
	})
	b := make([]byte, 0, 64+300*len(list))
	b = append(b, `{"now":`...)
	b = strconv.AppendFloat(b, float64(now.UnixMilli())/1000, 'f', 1, 64)
	b = append(b, `,"messages":`...)
	b = strconv.AppendUint(b, w.stats.total.messages, 10)
	b = append(b, `,"aircraft":[`...)
	for i, t := range list {
		if i > 0 {
			b = append(b, ",\n"...)
		} else {
			b = append(b, '\n')
		}
		b = appendAircraft(b, t, now, w.countsOf(t))
	}
	return append(b, "\n]}\n"...)
}

// countsOf returns the frame counts of an ICAO track, nil when frames are
// not counted or the track is not an ICAO aircraft.
func (w *Writer) countsOf(t *events.Track) *acCounts {
	if w.frames == nil || t.ICAO == "" {
		return nil
	}
	m, rssi, hasRSSI, ok := w.frames.lookup(t.ICAO)
	if !ok {
		return &acCounts{messages: t.Observations}
	}
	return &acCounts{messages: m, rssi: rssi, hasRSSI: hasRSSI}
}

// receiver builds receiver.json; w.mu is held (or w is new).
func (w *Writer) receiver() []byte {
	r := map[string]any{
		"version": "cuasd " + w.cfg.Version,
		"refresh": w.cfg.Interval.Milliseconds(),
		"history": min(w.histN, w.cfg.HistoryLen),
	}
	if w.cfg.Lat != nil && w.cfg.Lon != nil {
		r["lat"], r["lon"] = *w.cfg.Lat, *w.cfg.Lon
	}
	b, _ := json.Marshal(r)
	return append(b, '\n')
}

// writeAtomic writes name in dir through a temporary file renamed into
// place, so a reader (a web server, tar1090) never sees half a document.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename: %w", err)
	}
	return nil
}
