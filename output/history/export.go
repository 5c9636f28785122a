package history

import (
	"bufio"
	"bytes"
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
	// CSVT is the one-line .csvt sidecar GDAL reads beside a CSV of the
	// same name for the types of its columns (issue 34): saved as
	// history.csvt next to history.csv, ogr2ogr reads typed columns
	// without open options.
	CSVT Format = "csvt"
)

// Formats are every format an Accept header can ask for, the default
// first (CSVT has no media type of its own: only format=csvt asks for it).
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
	case CSVT:
		return "text/csv; charset=utf-8; header=absent"
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
		e.str(`{"type":"FeatureCollection","features":[`)
	case KML:
		e.kmlBegin()
	case CSV:
		return e.csv.Write(csvHeader)
	case CSVT:
		e.str(csvTypes)
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
	case CSVT:
		// the types do not depend on the points
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
		if len(e.cur) > 0 {
			if e.tracks > 1 {
				e.str(",")
			}
			e.geoTrack(e.id, e.cur)
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
		e.str(`]`)
		if next != "" {
			e.str(`,"next_cursor":`) // a foreign member (RFC 7946 §6.1)
			e.json(next)
		}
		e.str("}\n")
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
	return append(appendPointFields(append(b, '{'), p, false), '}')
}

// appendPointFields appends the members of appendPointJSON's object,
// without its braces. real writes every measurement with a fraction
// (1000.0; see geoReal), as the GeoJSON Point features need.
func appendPointFields(b []byte, p *Point, real bool) []byte {
	b = append(b, `"time":"`...)
	b = p.Time.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","lat":`...)
	b = appendFloat(b, p.Lat, real)
	b = append(b, `,"lon":`...)
	b = appendFloat(b, p.Lon, real)
	b = appendOptFloat(b, `,"alt_m":`, p.AltM, real)
	b = appendOptString(b, `,"alt_kind":`, p.AltKind)
	b = appendOptFloat(b, `,"speed_mps":`, p.SpeedMps, real)
	b = appendOptFloat(b, `,"heading_deg":`, p.HeadingDeg, real)
	b = appendOptFloat(b, `,"vertical_rate_mps":`, p.VRateMps, real)
	b = appendOptString(b, `,"protocol":`, p.Protocol)
	b = appendOptString(b, `,"sensor":`, p.Sensor)
	b = appendOptString(b, `,"decision":`, p.Decision)
	return appendOptFloat(b, `,"lambda":`, p.Lambda, real)
}

func appendFloat(b []byte, v float64, real bool) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	return appendNum(b, v, real)
}

func appendOptFloat(b []byte, key string, v *float64, real bool) []byte {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return b
	}
	return appendNum(append(b, key...), *v, real)
}

// appendNum appends v in decimal; real adds ".0" to a whole number.
func appendNum(b []byte, v float64, real bool) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, v, 'f', -1, 64)
	if real && bytes.IndexByte(b[n:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
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

// csvHeader names the CSV columns. The last, WKT, is the point as
// well-known text: GDAL's CSV driver reads a column named WKT as the
// geometry by default, so QGIS and ogr2ogr see points without open
// options (issue 34).
var csvHeader = []string{"track_id", "time", "lat", "lon", "alt_m", "alt_kind", "speed_mps", "heading_deg",
	"vertical_rate_mps", "protocol", "sensor", "decision", "lambda", "WKT"}

// csvTypes is the .csvt line of csvHeader's columns, in GDAL's type
// names (String, DateTime, Real, WKT).
const csvTypes = "String,DateTime,Real,Real,Real,String,Real,Real,Real,String,String,String,Real,WKT\r\n"

func csvRow(p *Point) []string {
	return []string{csvText(p.TrackID), p.Time.UTC().Format(timeFormat), fnum(p.Lat), fnum(p.Lon), fptr(p.AltM), csvText(p.AltKind),
		fptr(p.SpeedMps), fptr(p.HeadingDeg), fptr(p.VRateMps), csvText(p.Protocol), csvText(p.Sensor), csvText(p.Decision), fptr(p.Lambda),
		"POINT (" + fnum(p.Lon) + " " + fnum(p.Lat) + ")"}
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

// geoTrack writes one track as RFC 7946 Features: the track's line, then
// one Point per recorded fix. GIS tools (GDAL, QGIS) read a GeoJSON
// property as a typed column only when it is a scalar; lists of per-point
// values became strings with a warning (issue 34), so every per-point
// value lives on its own Point feature (feature "point") and the line
// (feature "track") carries the track's summary. Positions are
// [lon, lat]: RFC 7946 wants a third element to be height above the
// WGS 84 ellipsoid, and the altitudes cuasd receives are barometric
// (ADS-B), above mean sea level (MAVLink) or ellipsoidal (Remote ID), so
// each point carries alt_m with its alt_kind instead.
func (e *Encoder) geoTrack(id string, pts []Point) {
	last := &pts[len(pts)-1]
	props := geoLineProps{Feature: "track", TrackID: id, Count: len(pts), Start: pts[0].Time.UTC().Format(timeFormat),
		End: last.Time.UTC().Format(timeFormat), Protocol: last.Protocol, Sensor: last.Sensor,
		Decision: worstDecision(pts)}
	if l := maxLambda(pts); l != nil {
		g := geoReal(*l)
		props.Lambda = &g
	}
	e.json(geoFeatureJSON{Type: "Feature", ID: id, Geometry: lineGeometry(pts), Properties: props})
	for i := range pts {
		p := &pts[i]
		e.buf = append(e.buf[:0], `,{"type":"Feature","geometry":{"type":"Point","coordinates":[`...)
		e.buf = appendFloat(e.buf, p.Lon, false)
		e.buf = append(e.buf, ',')
		e.buf = appendFloat(e.buf, p.Lat, false)
		e.buf = append(e.buf, `]},"properties":{"feature":"point","track_id":`...)
		if e.buf = appendOptString(e.buf, "", id); id == "" {
			e.buf = append(e.buf, `""`...)
		}
		e.buf = append(appendPointFields(append(e.buf, ','), p, true), "}}"...)
		_, _ = e.w.Write(e.buf)
	}
}

// geoFeatureJSON is one GeoJSON Feature.
type geoFeatureJSON struct {
	Type       string `json:"type"`
	ID         string `json:"id,omitempty"`
	Geometry   any    `json:"geometry"`
	Properties any    `json:"properties"`
}

// geoLineProps are the properties of a track's line feature.
type geoLineProps struct {
	Feature  string   `json:"feature"`
	TrackID  string   `json:"track_id"`
	Count    int      `json:"count"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
	Protocol string   `json:"protocol,omitempty"`
	Sensor   string   `json:"sensor,omitempty"`
	Decision string   `json:"decision,omitempty"`
	Lambda   *geoReal `json:"lambda,omitempty"`
}

// geoReal is a measurement written with a fraction even when whole
// (1000.0): GDAL types a property by the numbers it sees, and an
// altitude column must be Real on every page, not Integer on one.
type geoReal float64

// MarshalJSON writes g as a JSON number with a decimal point.
func (g geoReal) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(g), 'f', -1, 64)
	if bytes.IndexByte(b, '.') < 0 {
		b = append(b, ".0"...)
	}
	return b, nil
}

// lineGeometry is the track's line: a LineString of [lon, lat], a
// MultiLineString when it crosses the antimeridian, a Point when the
// track never moved. A vertex equal to the one before it is left out
// (its time is kept on its Point feature): ADS-B repeats a position in
// the events between two position messages, and a repeated vertex is a
// zero-length segment GIS tools flag.
func lineGeometry(pts []Point) map[string]any {
	parts := splitAntimeridian(pts)
	lines := make([][][]float64, 0, len(parts))
	for _, part := range parts {
		var line [][]float64
		for _, v := range part {
			if n := len(line); n > 0 && line[n-1][0] == v.Lon && line[n-1][1] == v.Lat {
				continue
			}
			line = append(line, []float64{v.Lon, v.Lat})
		}
		if len(line) > 1 || len(parts) == 1 {
			lines = append(lines, line) // a part of one vertex has no segment: left out
		}
	}
	switch {
	case len(lines) > 1:
		return map[string]any{"type": "MultiLineString", "coordinates": lines}
	case len(lines) == 0 || len(lines[0]) == 1:
		return map[string]any{"type": "Point", "coordinates": []float64{pts[0].Lon, pts[0].Lat}}
	}
	return map[string]any{"type": "LineString", "coordinates": lines[0]}
}

// maxLambda is the highest Λ among pts (nil when none has one).
func maxLambda(pts []Point) *float64 {
	var m *float64
	for i := range pts {
		if l := pts[i].Lambda; l != nil && !math.IsNaN(*l) && (m == nil || *l > *m) {
			m = l
		}
	}
	return m
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
	e.str(`<Schema name="cuasd_track" id="cuasd_track">`)
	for _, f := range kmlFields {
		e.str(`<SimpleField name="` + f.name + `" type="` + f.typ + `"></SimpleField>`)
	}
	e.str("</Schema>\n")
}

// kmlFields are the typed ExtendedData of each track's Placemark (KML 2.2
// §9.5 Schema, §9.4 SchemaData): GDAL and Google Earth show them as
// columns (issue 34; before, a Placemark had only its name).
var kmlFields = []struct{ name, typ string }{
	{"track_id", "string"}, {"protocol", "string"}, {"sensor", "string"}, {"decision", "string"},
	{"lambda", "double"}, {"count", "int"}, {"start", "string"}, {"end", "string"},
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
	start, end := pts[0].Time.UTC().Format(timeFormat), last.Time.UTC().Format(timeFormat)
	e.str("<TimeSpan><begin>" + start + "</begin><end>" + end + "</end></TimeSpan>\n")
	lambda := ""
	if l := maxLambda(pts); l != nil {
		lambda = fnum(*l)
	}
	worst := worstDecision(pts)
	e.str(`<ExtendedData><SchemaData schemaUrl="#cuasd_track">`)
	for i, v := range []string{id, last.Protocol, last.Sensor, worst, lambda, strconv.Itoa(len(pts)), start, end} {
		if v == "" {
			continue // absent, not an empty value of the field's type
		}
		e.str(`<SimpleData name="` + kmlFields[i].name + `">`)
		e.xmlText(v)
		e.str("</SimpleData>")
	}
	e.str("</SchemaData></ExtendedData>\n")
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

// kmlTrack writes one gx:Track: every <when>, then every <gx:coord>. A
// vertex repeating the one before it in place and time is left out; one
// at the same place at a later time is kept, as its <when> says when the
// track was still there.
func (e *Encoder) kmlTrack(mode string, vs []vertex) {
	vs = dropRepeats(vs)
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

// dropRepeats returns vs without the vertices equal to their predecessor
// in position, altitude and time (in place).
func dropRepeats(vs []vertex) []vertex {
	out := vs[:0]
	for _, v := range vs {
		if n := len(out); n > 0 && out[n-1].Lon == v.Lon && out[n-1].Lat == v.Lat && out[n-1].Alt == v.Alt &&
			out[n-1].HasAlt == v.HasAlt && out[n-1].Time.Equal(v.Time) {
			continue
		}
		out = append(out, v)
	}
	return out
}

func (e *Encoder) xmlText(s string) { _ = xml.EscapeText(e.w, []byte(s)) }
