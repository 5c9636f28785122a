package cot

import (
	"strconv"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
)

// zoneColors are the stroke colours (ARGB) of each geofence class; the
// fill is the same colour at a quarter opacity. Red for the classes where
// a drone is most dangerous, orange for airports, yellow for crowds.
var zoneColors = map[gate.Class]uint32{
	gate.ClassAirport:                0xFFFF8C00,
	gate.ClassPrison:                 0xFFFF0000,
	gate.ClassMilitary:               0xFFFF0000,
	gate.ClassCriticalInfrastructure: 0xFFFF00FF,
	gate.ClassStadium:                0xFFFFFF00,
	gate.ClassEvent:                  0xFFFFFF00,
}

// defaultZoneColor is blue, for generic and unknown classes.
const defaultZoneColor = 0xFF0000FF

// ZoneColors returns the stroke and fill colours (ARGB) of a class.
func ZoneColors(c gate.Class) (stroke, fill uint32) {
	stroke, ok := zoneColors[c]
	if !ok {
		stroke = defaultZoneColor
	}
	return stroke, stroke&0x00FFFFFF | 0x40000000
}

// ZoneUID is the CoT uid of a geofence's drawing.
func ZoneUID(instance, id string) string { return "cuasd." + instance + ".zone-" + id }

// AppendZone appends the TAK drawing of a zone event: a circle (u-d-c-c)
// or a polygon (u-d-f, the exterior ring; holes are not drawn), coloured
// by class. A deleted zone is a delete event (t-x-d-d) for its drawing.
// It reports false when the zone has no usable geometry.
func (e *Encoder) AppendZone(dst []byte, ev *events.ZoneEvent) ([]byte, bool) {
	z := &ev.Zone
	if ev.Type == events.TypeZoneDeleted {
		return appendZoneDelete(dst, ev), true
	}
	lat, lon, ok := zoneCenter(z)
	if !ok {
		return dst, false
	}
	dst = append(dst, xmlHeader+`<event version="2.0" uid="`...)
	dst = appendZoneUID(dst, ev.Instance, z.ID, "")
	if z.IsCircle() {
		dst = append(dst, `" type="u-d-c-c"`...)
	} else {
		dst = append(dst, `" type="u-d-f"`...)
	}
	dst = append(dst, ` how="h-e"`...)
	dst = appendTimes(dst, ev.Time, false, ZoneStale)
	dst = append(dst, `><point`...)
	dst = appendNumAttr(dst, "lat", lat, 7)
	dst = appendNumAttr(dst, "lon", lon, 7)
	dst = append(dst, ` hae="9999999.0" ce="9999999.0" le="9999999.0"/><detail>`...)
	dst = appendZoneShape(dst, z)
	dst = appendZoneStyle(dst, z)
	return append(dst, `</detail></event>`...), true
}

func appendZoneUID(dst []byte, instance, id, suffix string) []byte {
	dst = append(dst, "cuasd."...)
	dst = appendEscaped(dst, instance, true)
	dst = append(dst, ".zone-"...)
	dst = appendEscaped(dst, id, true)
	return append(dst, suffix...)
}

// appendZoneDelete appends the delete event of a zone's drawing.
func appendZoneDelete(dst []byte, ev *events.ZoneEvent) []byte {
	dst = append(dst, xmlHeader+`<event version="2.0" uid="`...)
	dst = appendZoneUID(dst, ev.Instance, ev.Zone.ID, ".delete")
	dst = append(dst, `" type="t-x-d-d" how="h-e"`...)
	dst = appendTimes(dst, ev.Time, false, 20*time.Second)
	dst = append(dst, `><point lat="0" lon="0" hae="9999999.0" ce="9999999.0" le="9999999.0"/><detail><link uid="`...)
	dst = appendZoneUID(dst, ev.Instance, ev.Zone.ID, "")
	return append(dst, `" relation="none" type="none"/><__forcedelete/></detail></event>`...)
}

// exterior is the polygon's exterior ring, nil when there is none usable.
func exterior(z *gate.Geofence) [][]float64 {
	if z.Polygon == nil || len(z.Polygon.Coordinates) == 0 || len(z.Polygon.Coordinates[0]) < 4 {
		return nil
	}
	return z.Polygon.Coordinates[0]
}

// zoneCenter is a circle's centre or the mean of a polygon's vertices
// (where TAK puts the label).
func zoneCenter(z *gate.Geofence) (lat, lon float64, ok bool) {
	if z.IsCircle() {
		if len(z.Center) != 2 || z.RadiusM <= 0 {
			return 0, 0, false
		}
		return z.Center[0], z.Center[1], true
	}
	ring := exterior(z)
	if ring == nil {
		return 0, 0, false
	}
	for _, p := range ring {
		if len(p) < 2 { // every vertex is drawn, the closing one too
			return 0, 0, false
		}
	}
	n := 0
	for _, p := range ring[:len(ring)-1] { // closed: the last repeats the first
		lon, lat, n = lon+p[0], lat+p[1], n+1
	}
	return lat / float64(n), lon / float64(n), true
}

// appendZoneShape appends the circle's ellipse or the polygon's vertices
// (one <link point="lat,lon"/> each, closed, as TAK draws u-d-f).
func appendZoneShape(dst []byte, z *gate.Geofence) []byte {
	if z.IsCircle() {
		dst = append(dst, `<shape><ellipse`...)
		dst = appendNumAttr(dst, "major", z.RadiusM, 1)
		dst = appendNumAttr(dst, "minor", z.RadiusM, 1)
		return append(dst, ` angle="360"/></shape>`...)
	}
	for _, p := range exterior(z) {
		dst = append(dst, `<link point="`...)
		dst = appendNum(dst, p[1], 7)
		dst = append(dst, ',')
		dst = appendNum(dst, p[0], 7)
		dst = append(dst, `"/>`...)
	}
	return dst
}

// appendZoneStyle appends colours, the name and the remarks of a zone.
func appendZoneStyle(dst []byte, z *gate.Geofence) []byte {
	stroke, fill := ZoneColors(z.Class)
	dst = append(dst, `<strokeColor value="`...)
	dst = strconv.AppendInt(dst, int64(int32(stroke)), 10)
	dst = append(dst, `"/><strokeWeight value="3.0"/><fillColor value="`...)
	dst = strconv.AppendInt(dst, int64(int32(fill)), 10)
	dst = append(dst, `"/><contact callsign="`...)
	name := z.Name
	if name == "" {
		name = z.ID
	}
	dst = appendEscaped(dst, name, true)
	dst = append(dst, `"/><labels_on value="true"/><remarks>cuasd geofence `...)
	dst = appendEscaped(dst, z.ID, false)
	dst = append(dst, " (class "...)
	class := string(z.Class)
	if class == "" {
		class = string(gate.ClassGeneric)
	}
	dst = appendEscaped(dst, class, false)
	dst = append(dst, ')')
	if z.FloorM != nil {
		dst = append(dst, "; floor "...)
		dst = appendNum(dst, *z.FloorM, 1)
		dst = append(dst, " m"...)
	}
	if z.CeilingM != nil {
		dst = append(dst, "; ceiling "...)
		dst = appendNum(dst, *z.CeilingM, 1)
		dst = append(dst, " m"...)
	}
	return append(dst, `.</remarks>`...)
}
