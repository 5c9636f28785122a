package history

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Format is an export format of history.
type Format string

// The export formats.
const (
	JSON    Format = "json"
	GeoJSON Format = "geojson"
	KML     Format = "kml"
	CSV     Format = "csv"
)

// Formats are every format, the default first.
var Formats = []Format{JSON, GeoJSON, KML, CSV}

// ContentType is the media type of an answer in f.
func (f Format) ContentType() string {
	switch f {
	case GeoJSON:
		return "application/geo+json"
	case KML:
		return "application/vnd.google-earth.kml+xml"
	case CSV:
		return "text/csv; charset=utf-8; header=present"
	}
	return "application/json"
}

// Ext is the file name extension of f.
func (f Format) Ext() string { return string(f) }

// FormatForAccept picks the format an Accept header asks for; JSON when it
// names none of the others.
func FormatForAccept(accept string) Format {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		for _, f := range Formats {
			ct, _, _ := strings.Cut(f.ContentType(), ";")
			if strings.EqualFold(strings.TrimSpace(mt), ct) {
				return f
			}
		}
	}
	return JSON
}

// Encoder writes points, ordered by track and then time, in one format.
// JSON and CSV stream point by point; GeoJSON and KML hold one track's
// points at a time (a feature's geometry type and a gx:Track's <when>
// list come before its coordinates), which the callers bound by their
// page and answer limits.
type Encoder struct {
	f      Format
	w      *bufio.Writer
	csv    *csv.Writer
	single bool // one track: the /v1/tracks/{id}/history shape

	id     string  // current track
	cur    []Point // GeoJSON, KML: the current track's points
	inCur  int     // JSON: points written of the current track
	tracks int
	points int
	buf    []byte // JSON: one point
}

// NewEncoder returns an encoder writing to w. single selects the shape of
// one track's history (a JSON object with its points, a GeoJSON Feature)
// rather than of an area query (a list of tracks, a FeatureCollection).
func NewEncoder(w io.Writer, f Format, single bool) *Encoder {
	e := &Encoder{f: f, w: bufio.NewWriterSize(w, 32<<10), single: single}
	if f == CSV {
		e.csv = csv.NewWriter(e.w)
		e.csv.UseCRLF = true // RFC 4180
	}
	return e
}

// Begin writes what comes before the first point; trackID names the track
// of a single-track answer (written even when it has no points).
func (e *Encoder) Begin(trackID string) error {
	e.id = trackID
	switch e.f {
	case JSON:
		if e.single {
			e.str(`{"track_id":`)
			e.json(trackID)
			e.str(`,"points":[`)
		} else {
			e.str(`{"tracks":[`)
		}
	case GeoJSON:
		if !e.single {
			e.str(`{"type":"FeatureCollection","features":[`)
		}
	case KML:
		e.kmlBegin()
	case CSV:
		return e.csv.Write(csvHeader)
	}
	return nil
}

// Add writes (or holds) one point; points must come ordered by track and
// time.
func (e *Encoder) Add(p *Point) error {
	if p.TrackID != e.id || e.points == 0 && !e.single {
		if e.points > 0 {
			e.endTrack()
		}
		e.id = p.TrackID
		e.startTrack()
	}
	e.points++
	switch e.f {
	case JSON:
		if e.inCur > 0 {
			e.str(",")
		}
		e.buf = appendPointJSON(e.buf[:0], p)
		_, _ = e.w.Write(e.buf)
		e.inCur++
	case CSV:
		return e.csv.Write(csvRow(p))
	default:
		e.cur = append(e.cur, *p)
	}
	return nil
}

// startTrack opens a track of a multi-track JSON answer.
func (e *Encoder) startTrack() {
	e.tracks++
	e.inCur = 0
	if e.f == JSON && !e.single {
		if e.tracks > 1 {
			e.str(",")
		}
		e.str(`{"track_id":`)
		e.json(e.id)
		e.str(`,"points":[`)
	}
}

// endTrack closes the current track.
func (e *Encoder) endTrack() {
	switch e.f {
	case JSON:
		if !e.single {
			e.str(`],"count":` + strconv.Itoa(e.inCur) + `}`)
		}
	case GeoJSON:
		if len(e.cur) > 0 || e.single {
			if !e.single && e.tracks > 1 {
				e.str(",")
			}
			e.geoFeature(e.id, e.cur)
		}
	case KML:
		if len(e.cur) > 0 {
			e.kmlPlacemark(e.id, e.cur)
		}
	}
	e.cur = e.cur[:0]
}

// End closes the answer; next is the cursor of the next page ("" when
// this is the last), written into JSON and GeoJSON bodies.
func (e *Encoder) End(next string) error {
	if e.points > 0 || e.single {
		e.endTrack()
	}
	switch e.f {
	case JSON:
		if e.single {
			e.str(`],"count":` + strconv.Itoa(e.points) + "}\n")
			break
		}
		e.str(`],"count":` + strconv.Itoa(e.tracks) + `,"points":` + strconv.Itoa(e.points))
		if next != "" {
			e.str(`,"next_cursor":`)
			e.json(next)
		}
		e.str("}\n")
	case GeoJSON:
		if !e.single {
			e.str(`]`)
			if next != "" {
				e.str(`,"next_cursor":`) // a foreign member (RFC 7946 §6.1)
				e.json(next)
			}
			e.str("}\n")
		}
	case KML:
		e.str("</Document>\n</kml>\n")
	case CSV:
		e.csv.Flush()
		if err := e.csv.Error(); err != nil {
			return err
		}
	}
	return e.w.Flush()
}

// Points is the number of points written.
func (e *Encoder) Points() int { return e.points }

func (e *Encoder) str(s string) { _, _ = e.w.WriteString(s) }

func (e *Encoder) json(v any) {
	b, _ := json.Marshal(v) // values of our own types: cannot fail
	_, _ = e.w.Write(b)
}

// pointJSON is a point as the JSON answers show it.
type pointJSON struct {
	Time       string   `json:"time"`
	Lat        float64  `json:"lat"`
	Lon        float64  `json:"lon"`
	AltM       *float64 `json:"alt_m,omitempty"`
	AltKind    string   `json:"alt_kind,omitempty"`
	SpeedMps   *float64 `json:"speed_mps,omitempty"`
	HeadingDeg *float64 `json:"heading_deg,omitempty"`
	VRateMps   *float64 `json:"vertical_rate_mps,omitempty"`
	Protocol   string   `json:"protocol,omitempty"`
	Sensor     string   `json:"sensor,omitempty"`
	Decision   string   `json:"decision,omitempty"`
	Lambda     *float64 `json:"lambda,omitempty"`
}

// appendPointJSON appends p as the JSON object pointJSON describes. Written
// by hand: reflection-based encoding was most of the time of a track's
// hour (BenchmarkQueryTrackHour). Non-finite measurements are left out,
// as JSON cannot hold them.
func appendPointJSON(b []byte, p *Point) []byte {
	b = append(b, `{"time":"`...)
	b = p.Time.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","lat":`...)
	b = appendFloat(b, p.Lat)
	b = append(b, `,"lon":`...)
	b = appendFloat(b, p.Lon)
	b = appendOptFloat(b, `,"alt_m":`, p.AltM)
	b = appendOptString(b, `,"alt_kind":`, p.AltKind)
	b = appendOptFloat(b, `,"speed_mps":`, p.SpeedMps)
	b = appendOptFloat(b, `,"heading_deg":`, p.HeadingDeg)
	b = appendOptFloat(b, `,"vertical_rate_mps":`, p.VRateMps)
	b = appendOptString(b, `,"protocol":`, p.Protocol)
	b = appendOptString(b, `,"sensor":`, p.Sensor)
	b = appendOptString(b, `,"decision":`, p.Decision)
	b = appendOptFloat(b, `,"lambda":`, p.Lambda)
	return append(b, '}')
}

func appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

func appendOptFloat(b []byte, key string, v *float64) []byte {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return b
	}
	return strconv.AppendFloat(append(b, key...), *v, 'f', -1, 64)
}

func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s) // rare: escape with encoding/json
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// timeFormat is RFC 3339 with the sub-seconds a fix has.
const timeFormat = time.RFC3339Nano

func pointJSONOf(p *Point) pointJSON {
	return pointJSON{Time: p.Time.UTC().Format(timeFormat), Lat: p.Lat, Lon: p.Lon, AltM: p.AltM, AltKind: p.AltKind,
		SpeedMps: p.SpeedMps, HeadingDeg: p.HeadingDeg, VRateMps: p.VRateMps,
		Protocol: p.Protocol, Sensor: p.Sensor, Decision: p.Decision, Lambda: p.Lambda}
}

var csvHeader = []string{"track_id", "time", "lat", "lon", "alt_m", "alt_kind", "speed_mps", "heading_deg",
	"vertical_rate_mps", "protocol", "sensor", "decision", "lambda"}

func csvRow(p *Point) []string {
	return []string{csvText(p.TrackID), p.Time.UTC().Format(timeFormat), fnum(p.Lat), fnum(p.Lon), fptr(p.AltM), csvText(p.AltKind),
		fptr(p.SpeedMps), fptr(p.HeadingDeg), fptr(p.VRateMps), csvText(p.Protocol), csvText(p.Sensor), csvText(p.Decision), fptr(p.Lambda)}
}

// csvText makes a text cell safe to open in a spreadsheet (OWASP "CSV
// injection", issue 32): a cell beginning with '=', '+', '-', '@', a tab
// or a carriage return would be taken for a formula, so it gets a leading
// apostrophe, which spreadsheets show as text. Only text cells: numbers
// are written by fnum and stay numbers (a longitude of -0.5 stays -0.5).
func csvText(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func fptr(v *float64) string {
	if v == nil {
		return ""
	}
	return fnum(*v)
}

// geoFeature writes one track as an RFC 7946 Feature: a LineString of
// [lon, lat(, alt)] (a Point when the track has one position), with the
// time of every position in properties.times. Positions carry an
// altitude only when every point has one, so that no position is 3D and
// its neighbour 2D.
func (e *Encoder) geoFeature(id string, pts []Point) {
	all3D := len(pts) > 0
	for i := range pts {
		all3D = all3D && pts[i].AltM != nil
	}
	coord := func(v vertex) []float64 {
		if all3D {
			return []float64{v.Lon, v.Lat, v.Alt}
		}
		return []float64{v.Lon, v.Lat}
	}
	var geom any
	switch len(pts) {
	case 0:
		geom = nil // a track with no points in the window
	case 1:
		geom = map[string]any{"type": "Point", "coordinates": coord(vertexOf(&pts[0]))}
	default:
		parts := splitAntimeridian(pts)
		lines := make([][][]float64, len(parts))
		for i, part := range parts {
			for _, v := range part {
				lines[i] = append(lines[i], coord(v))
			}
		}
		if len(lines) == 1 {
			geom = map[string]any{"type": "LineString", "coordinates": lines[0]}
		} else {
			geom = map[string]any{"type": "MultiLineString", "coordinates": lines}
		}
	}
	props := map[string]any{"track_id": id, "count": len(pts)}
	times := make([]string, len(pts))
	alts := make([]*float64, len(pts))
	decs := make([]string, len(pts))
	for i := range pts {
		times[i], alts[i], decs[i] = pts[i].Time.UTC().Format(timeFormat), pts[i].AltM, pts[i].Decision
	}
	props["times"], props["alt_m"], props["decisions"] = times, alts, decs
	if len(pts) > 0 {
		last := &pts[len(pts)-1]
		props["protocol"], props["sensor"], props["alt_kind"] = last.Protocol, last.Sensor, last.AltKind
		props["start"], props["end"] = times[0], times[len(times)-1]
		props["decision"] = worstDecision(pts)
	}
	e.json(map[string]any{"type": "Feature", "id": id, "geometry": geom, "properties": props})
	if e.single {
		e.str("\n")
	}
}

// decisionRank orders the gate's decisions by severity.
var decisionRank = map[string]int{"monitor": 1, "alert": 2, "intercept-recommended": 3}

// worstDecision is the most severe decision among pts ("" when none).
func worstDecision(pts []Point) string {
	worst := ""
	for i := range pts {
		if decisionRank[pts[i].Decision] > decisionRank[worst] {
			worst = pts[i].Decision
		}
	}
	return worst
}

// kmlStyles are the line colours (aabbggrr) of each decision.
var kmlStyles = []struct{ id, color string }{
	{"none", "ffb0b0b0"}, {"monitor", "ff00c000"}, {"alert", "ff00a5ff"}, {"intercept-recommended", "ff0000ff"},
}

func (e *Encoder) kmlBegin() {
	e.str(xml.Header)
	e.str(`<kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2">` + "\n<Document>\n")
	if e.single {
		e.str("<name>")
		e.xmlText(e.id)
		e.str(" history</name>\n")
	} else {
		e.str("<name>cuasd history</name>\n")
	}
	for _, s := range kmlStyles {
		e.str(`<Style id="decision-` + s.id + `"><IconStyle><color>` + s.color + `</color></IconStyle>` +
			`<LineStyle><color>` + s.color + `</color><width>3</width></LineStyle></Style>` + "\n")
	}
}

// kmlPlacemark writes one track as a Placemark holding a time-stamped
// gx:Track, styled by the most severe decision of its points.
func (e *Encoder) kmlPlacemark(id string, pts []Point) {
	style := worstDecision(pts)
	if style == "" {
		style = "none"
	}
	mode := "absolute"
	for i := range pts {
		if pts[i].AltM == nil {
			mode = "clampToGround" // heights unknown for some points
			break
		}
	}
	e.str("<Placemark><name>")
	e.xmlText(id)
	e.str("</name><description>")
	last := &pts[len(pts)-1]
	e.xmlText(last.Protocol + " track, " + strconv.Itoa(len(pts)) + " positions from " +
		pts[0].Time.UTC().Format(timeFormat) + " to " + last.Time.UTC().Format(timeFormat) + "; sensors " + last.Sensor)
	e.str("</description><styleUrl>#decision-" + style + "</styleUrl>\n")
	parts := splitAntimeridian(pts)
	if len(parts) == 1 {
		e.kmlTrack(mode, parts[0])
	} else {
		// A gx:MultiTrack of one gx:Track per side of the antimeridian,
		// not joined across it (gx:interpolate 0).
		e.str("<gx:MultiTrack><altitudeMode>" + mode + "</altitudeMode><gx:interpolate>0</gx:interpolate>\n")
		for _, part := range parts {
			e.kmlTrack(mode, part)
		}
		e.str("</gx:MultiTrack>")
	}
	e.str("</Placemark>\n")
}

// kmlTrack writes one gx:Track: every <when>, then every <gx:coord>.
func (e *Encoder) kmlTrack(mode string, vs []vertex) {
	e.str("<gx:Track><altitudeMode>" + mode + "</altitudeMode>\n")
	for i := range vs {
		e.str("<when>" + vs[i].Time.UTC().Format(timeFormat) + "</when>\n")
	}
	for i := range vs {
		alt := 0.0
		if mode == "absolute" {
			alt = vs[i].Alt
		}
		e.str("<gx:coord>" + fnum(vs[i].Lon) + " " + fnum(vs[i].Lat) + " " + fnum(alt) + "</gx:coord>\n")
	}
	e.str("</gx:Track>")
}

func (e *Encoder) xmlText(s string) { _ = xml.EscapeText(e.w, []byte(s)) }
