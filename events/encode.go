package events

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the event's JSON to b: byte for byte what
// json.Marshal(e) writes (TestAppendJSONMatchesEncodingJSON and
// FuzzAppendJSON hold it to that), without reflection. Track events are
// the one event published for every live track about once a second, and
// encoding/json was most of their cost on the pipeline benchmark (issue
// 17). The rare parts (a product claim, Comm-B air data) and anything
// encoding/json would refuse or escape (NaN, a year past 9999, a string
// with characters JSON or HTML escapes) go through encoding/json itself,
// so the output cannot drift from it.
func (e *TrackEvent) AppendJSON(b []byte) ([]byte, error) {
	w := jsonWriter{b: b}
	w.open()
	w.int("v", int64(e.V))
	w.str("type", e.Type)
	w.time("time", e.Time)
	w.str("instance", e.Instance)
	w.key("track")
	w.track(&e.Track)
	if e.Assessment != nil {
		w.key("assessment")
		w.assessment(e.Assessment)
	}
	w.close()
	if w.err != nil {
		data, err := json.Marshal(e)
		return append(b, data...), err
	}
	return w.b, nil
}

// jsonWriter writes one JSON object at a time; an error stops it and is
// kept for the caller, who then falls back to encoding/json.
type jsonWriter struct {
	b     []byte
	first bool // no member written yet in the current object
	err   error
}

func (w *jsonWriter) open() { w.b = append(w.b, '{'); w.first = true }

func (w *jsonWriter) close() { w.b = append(w.b, '}'); w.first = false }

// key starts a member; names are constants that need no escaping.
func (w *jsonWriter) key(name string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) str(name, v string) { w.key(name); w.string(v) }

// strOmit is a string member with omitempty.
func (w *jsonWriter) strOmit(name, v string) {
	if v != "" {
		w.str(name, v)
	}
}

func (w *jsonWriter) int(name string, v int64) {
	w.key(name)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *jsonWriter) bool(name string, v bool) {
	w.key(name)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *jsonWriter) float(name string, v float64) { w.key(name); w.number(v) }

// floatPtr is a *float64 member with omitempty.
func (w *jsonWriter) floatPtr(name string, v *float64) {
	if v != nil {
		w.float(name, *v)
	}
}

// intPtr is a *int member with omitempty.
func (w *jsonWriter) intPtr(name string, v *int) {
	if v != nil {
		w.int(name, int64(*v))
	}
}

func (w *jsonWriter) time(name string, t time.Time) { w.key(name); w.timeValue(t) }

// string writes a JSON string when no character in it needs escaping
// (printable ASCII other than '"', '\\' and HTML's '<', '>', '&'), and
// leaves anything else to encoding/json.
func (w *jsonWriter) string(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			w.marshal(s)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

// number writes a float64 as encoding/json does: shortest representation,
// exponent form below 1e-6 and from 1e21, "e-07" written "e-7".
func (w *jsonWriter) number(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.fail(&json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)})
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(w.b); format == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		w.b[n-2] = w.b[n-1]
		w.b = w.b[:n-1]
	}
}

// timeValue writes a time as time.Time.MarshalJSON does (RFC 3339 with
// nanoseconds), leaving to encoding/json what MarshalJSON would refuse.
func (w *jsonWriter) timeValue(t time.Time) {
	if y := t.Year(); y < 0 || y > 9999 {
		w.marshal(t)
		return
	}
	if _, off := t.Zone(); off%60 != 0 {
		w.marshal(t)
		return
	}
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

// strings writes a []string member without omitempty (nil is null).
func (w *jsonWriter) strings(name string, v []string) {
	w.key(name)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.string(s)
	}
	w.b = append(w.b, ']')
}

// marshal writes v through encoding/json.
func (w *jsonWriter) marshal(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return
	}
	w.b = append(w.b, data...)
}

func (w *jsonWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// track writes a Track in its fields' order.
func (w *jsonWriter) track(t *Track) {
	w.open()
	w.str("track_id", t.TrackID)
	w.strOmit("id", t.ID)
	w.strings("protocols", t.Protocols)
	w.strOmit("icao", t.ICAO)
	w.strOmit("uas_id", t.UASID)
	w.strOmit("operator_id", t.OperatorID)
	w.strOmit("callsign", t.Callsign)
	w.strOmit("category", t.Category)
	if k := t.CategoryKind; k != 0 {
		w.key("category_kind")
		if k.Valid() {
			w.string(k.String()) // MarshalText's text, without its allocation
		} else {
			w.marshal(k) // an unknown kind: encoding/json's error
		}
	}
	w.floatPtr("lat", t.Lat)
	w.floatPtr("lon", t.Lon)
	w.strOmit("position_method", t.PosMethod)
	w.strOmit("time_source", t.TimeSource)
	w.floatPtr("alt_m", t.AltM)
	w.strOmit("alt_kind", t.AltKind)
	w.floatPtr("speed_mps", t.SpeedMps)
	w.floatPtr("heading_deg", t.HeadingDeg)
	w.floatPtr("vertical_rate_mps", t.VRateMps)
	w.floatPtr("operator_lat", t.OperatorLat)
	w.floatPtr("operator_lon", t.OperatorLon)
	w.floatPtr("h_accuracy_m", t.HAccuracyM)
	w.floatPtr("v_accuracy_m", t.VAccuracyM)
	w.strOmit("squawk", t.Squawk)
	w.strOmit("emergency", t.Emergency)
	w.strings("sensors", t.Sensors)
	w.time("first_seen", t.FirstSeen)
	w.time("last_seen", t.LastSeen)
	w.key("observations")
	w.b = strconv.AppendUint(w.b, t.Observations, 10)
	if len(t.Warnings) > 0 {
		w.strings("warnings", t.Warnings)
	}
	w.trackTail(t)
	w.close()
}

// trackTail writes the Track's members from history on.
func (w *jsonWriter) trackTail(t *Track) {
	if len(t.History) > 0 {
		w.key("history")
		w.points(t.History)
	}
	if t.PositionTime != nil {
		w.time("position_time", *t.PositionTime)
	}
	if t.AirData != nil {
		w.key("air_data")
		w.marshal(t.AirData) // Comm-B aircraft only
	}
	if t.Product != nil {
		w.key("product")
		w.marshal(t.Product) // field sensors' drones only
	}
	if len(t.SensorSignals) > 0 {
		w.key("sensor_signals")
		w.signals(t.SensorSignals)
	}
	if t.ADSB != nil {
		w.key("adsb")
		w.adsb(t.ADSB)
	}
	if t.Simulated {
		w.key("simulated")
		w.b = append(w.b, "true"...)
	}
	w.strOmit("position_source", t.PositionSource)
	if t.MLAT != nil {
		w.key("mlat")
		w.marshal(t.MLAT) // multilaterated aircraft only
	}
	if t.Verification != nil {
		w.key("verification")
		w.marshal(t.Verification) // checked ADS-B claims only
	}
}

func (w *jsonWriter) points(ps []Point) {
	w.b = append(w.b, '[')
	for i := range ps {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		p := &ps[i]
		w.open()
		w.time("t", p.T)
		w.float("lat", p.Lat)
		w.float("lon", p.Lon)
		w.floatPtr("alt_m", p.AltM)
		w.close()
	}
	w.b = append(w.b, ']')
}

func (w *jsonWriter) signals(ss []SensorSignal) {
	w.b = append(w.b, '[')
	for i := range ss {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		s := &ss[i]
		w.open()
		w.str("sensor", s.Sensor)
		w.floatPtr("rssi_dbm", s.RSSIDBm)
		w.floatPtr("signal_dbfs", s.SignalDBFS)
		w.time("time", s.Time)
		w.close()
	}
	w.b = append(w.b, ']')
}

func (w *jsonWriter) adsb(a *ADSBInfo) {
	w.open()
	w.strOmit("address_type", a.AddressType)
	w.strOmit("air_ground", a.AirGround)
	w.intPtr("nic", a.NIC)
	w.intPtr("rc_m", a.RcM)
	w.intPtr("version", a.Version)
	w.intPtr("nac_v", a.NACv)
	w.intPtr("sil", a.SIL)
	w.strOmit("sil_type", a.SILType)
	w.floatPtr("nav_heading_deg", a.NavHeadingDeg)
	w.close()
}

func (w *jsonWriter) assessment(a *Assessment) {
	w.open()
	w.str("decision", a.Decision)
	w.float("lambda", a.Lambda)
	w.bool("human_decision_required", a.HumanDecision)
	w.bool("breach", a.Breach)
	w.strOmit("geofence", a.Geofence)
	w.strOmit("geofence_name", a.GeofenceName)
	w.floatPtr("distance_m", a.DistanceM)
	w.strings("caps", a.Caps)
	if len(a.TopAxes) > 0 {
		w.key("top_axes")
		w.b = append(w.b, '[')
		for i := range a.TopAxes {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			x := &a.TopAxes[i]
			w.open()
			w.str("id", x.ID)
			w.str("name", x.Name)
			w.float("value", x.Value)
			w.float("weight", x.Weight)
			w.close()
		}
		w.b = append(w.b, ']')
	}
	w.strOmit("swarm_id", a.SwarmID)
	w.bool("allow_listed", a.AllowListed)
	w.strOmit("side", a.Side)
	if a.ReceiptIndex != nil {
		w.int("receipt_index", *a.ReceiptIndex)
	}
	w.strOmit("class", a.Class)
	w.close()
}
