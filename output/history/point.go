// Package history is the track-history output: it records every position
// fix that cuasd's track events carry (cuas.track.>) into an embedded
// SQLite database in the data directory, keeps it within an age and a
// size limit, and answers the history queries of the HTTP API (one
// track's positions in a window, every track in a box and window) in
// JSON, GeoJSON (RFC 7946), KML 2.2 and CSV (RFC 4180).
//
// Why SQLite and not JetStream: history is read by track and time and by
// area and time, in windows, thinned, paginated — queries an indexed
// table answers directly and a stream would have to be scanned or
// mirrored into an index anyway. Every cuasd instance receives every
// track event (core NATS), so every instance keeps its own complete copy
// and can answer alone; see docs/HISTORY.md.
package history

import (
	"fmt"
	"time"
)

// Point is one stored position fix of a track.
type Point struct {
	TrackID string
	// Time is the receive time of the fix (UTC, nanoseconds).
	Time time.Time
	Lat  float64
	Lon  float64
	// AltM and the other measurements are nil when unknown.
	AltM       *float64
	AltKind    string
	SpeedMps   *float64
	HeadingDeg *float64
	VRateMps   *float64
	// Protocol is the protocol of the track id (adsb, remoteid, mavlink).
	Protocol string
	// Sensor lists the sensors that heard the track, comma-separated.
	Sensor string
	// Decision and Lambda are the gate's assessment of the track at the
	// time of the fix, when there was one.
	Decision string
	Lambda   *float64
}

// TrackQuery selects one track's points.
type TrackQuery struct {
	ID       string
	From, To time.Time
	// MaxPoints, when positive and smaller than the number of points in
	// the window, thins evenly, keeping the first and the last point.
	MaxPoints int
}

// BBox is a longitude/latitude box: min lon, min lat, max lon, max lat.
// A box whose min lon is greater than its max lon crosses the
// antimeridian (RFC 7946 §5.2): it holds the longitudes from min lon to
// 180 and from -180 to max lon.
type BBox [4]float64

// CrossesAntimeridian reports whether b spans ±180° longitude (min lon >
// max lon).
func (b *BBox) CrossesAntimeridian() bool { return b[0] > b[2] }

// AreaQuery selects every point in a box and window, ordered by track and
// time, one page at a time.
type AreaQuery struct {
	From, To time.Time
	// BBox nil means the whole world.
	BBox *BBox
	// Protocol, when set, keeps only tracks of that protocol.
	Protocol string
	// Cursor, when set, starts the page at that point (from a previous
	// page's next cursor).
	Cursor *Cursor
	// Limit is the page size in points.
	Limit int
}

// Cursor is where a page of an area query starts: the first point not yet
// returned, in (track, time) order.
type Cursor struct {
	TrackID string
	Time    time.Time
}

// Error is the error type of package history.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "history: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Err: err}
}

// ErrUnavailable is returned by queries while the store is closed (before
// the recorder runs, or after cuasd stopped it).
var ErrUnavailable = &Error{Op: "query", Err: fmt.Errorf("the history store is not open")}
