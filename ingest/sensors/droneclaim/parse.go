package droneclaim

import "strings"

// messageKeys are the F3411 message names the feeds use as keys.
var messageKeys = [...]string{"Basic ID", "Location/Vector Message", "System Message", "Operator ID Message",
	"Self-ID Message", "Frequency Message", "Authentication Message", "Auth Message"}

// parser accumulates one Claim from the parts of a message; the first
// error wins.
type parser struct {
	c   Claim
	err *Error
}

func (p *parser) fail(e *Error, field string) {
	if p.err == nil && e != nil {
		e.Field = field
		p.err = e
	}
}

// num reads obj[key] as a number within [lo, hi]; ok is false when it is
// absent or wrong (the error is then recorded).
func (p *parser) num(obj map[string]any, key string, lo, hi float64) (float64, bool) {
	x, ok, err := number(obj[key])
	if err != nil {
		p.fail(err, key)
		return 0, false
	}
	if ok && !(x >= lo && x <= hi) {
		p.fail(&Error{Reason: "range", Detail: "value outside the plausible range"}, key)
		return 0, false
	}
	return x, ok
}

// first returns the first of keys present in obj.
func first(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := obj[k]; ok && v != nil {
			return k
		}
	}
	return keys[0]
}

func (p *parser) str(obj map[string]any, key string) string {
	s, err := text(obj[key])
	p.fail(err, key)
	return s
}

// object returns obj[key] as an object, recording a type error when it is
// something else.
func (p *parser) object(obj map[string]any, key string) (map[string]any, bool) {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		p.fail(&Error{Reason: "type", Detail: "want an object"}, key)
	}
	return o, ok
}

// latLon reads a position from the first pair of keys present; (0, 0), the
// feeds' "unknown", is absent.
func (p *parser) latLon(obj map[string]any, pairs ...[2]string) (lat, lon float64, ok bool) {
	for _, k := range pairs {
		_, hasLat := obj[k[0]]
		_, hasLon := obj[k[1]]
		if !hasLat && !hasLon {
			continue
		}
		lat, okLat := p.num(obj, k[0], -90, 90)
		lon, okLon := p.num(obj, k[1], -180, 180)
		return lat, lon, okLat && okLon && (lat != 0 || lon != 0)
	}
	return 0, 0, false
}

// item reads one list item (or the ESP32 object): its message keys and a
// MAC or RSSI beside them.
func (p *parser) item(obj map[string]any) {
	p.macRSSI(obj, "MAC", "RSSI")
	if o, ok := p.object(obj, "Basic ID"); ok {
		p.basicID(o)
	}
	if o, ok := p.object(obj, "Location/Vector Message"); ok {
		p.location(o)
	}
	if o, ok := p.object(obj, "System Message"); ok {
		p.system(o)
	}
	if o, ok := p.object(obj, "Operator ID Message"); ok && p.c.OperatorID == "" {
		p.c.OperatorID = p.str(o, "operator_id")
	}
	if o, ok := p.object(obj, "Self-ID Message"); ok && p.c.SelfID == "" {
		p.c.SelfID = p.str(o, first(o, "text", "description"))
	}
	if o, ok := p.object(obj, "Frequency Message"); ok {
		p.frequency(o, "frequency")
	}
}

func (p *parser) macRSSI(obj map[string]any, macKey, rssiKey string) {
	if s := p.str(obj, macKey); s != "" {
		p.c.MAC = strings.ToUpper(strings.Fields(s)[0])
	}
	if x, ok := p.num(obj, rssiKey, -200, 50); ok {
		p.c.RSSI, p.c.HasRSSI = x, true
	}
}

// frequency reads a frequency in Hz, or in MHz when the value is small
// (droneid-go's frequency_mhz, some forwarders' "freq").
func (p *parser) frequency(obj map[string]any, key string) {
	x, ok := p.num(obj, key, 1, 1e12)
	if !ok {
		return
	}
	if x < 1e5 {
		x *= 1e6
	}
	p.c.FrequencyHz, p.c.HasFrequency = x, true
}

func (p *parser) basicID(o map[string]any) {
	p.macRSSI(o, "MAC", "RSSI")
	if _, ok := o["frequency_mhz"]; ok {
		p.frequency(o, "frequency_mhz")
	}
	p.product(o)
	id := p.str(o, first(o, "id", "uas_id", "serial_number"))
	idType, hasType, err := enum(o["id_type"], idTypes, 15)
	p.fail(err, "id_type")
	uaType, hasUA, err := enum(o["ua_type"], uaTypes, 15)
	p.fail(err, "ua_type")
	// A drone may send two Basic IDs (a serial and a CAA registration);
	// the serial number is the stabler identity and wins.
	if id == "" || (p.c.ID != "" && p.c.IDType == 1 && idType != 1) {
		return
	}
	p.c.ID = id
	if hasType {
		p.c.IDType = idType
	}
	if hasUA {
		p.c.UAType = uaType
	}
}

func (p *parser) location(o map[string]any) {
	c := &p.c
	// The Location message's keys, and the flat forwarders' spellings.
	c.Lat, c.Lon, c.HasPosition = p.latLon(o, [2]string{"latitude", "longitude"}, [2]string{"lat", "lon"}, [2]string{"lat", "lng"})
	c.GeoAltM, c.HasGeoAlt = p.num(o, first(o, "geodetic_altitude", "alt", "altitude"), -1000, 31767)
	c.BaroAltM, c.HasBaroAlt = p.num(o, "pressure_altitude", -1000, 31767)
	c.HeightM, c.HasHeight = p.num(o, first(o, "height_agl", "height"), -1000, 31767)
	c.SpeedMps, c.HasSpeed = p.num(o, "speed", 0, 254.25)
	c.VSpeedMps, c.HasVSpeed = p.num(o, first(o, "vert_speed", "vspeed"), -62, 62)
	c.DirDeg, c.HasDir = p.num(o, first(o, "direction", "heading", "track"), 0, 360)
	if ht, ok, err := enum(o["height_type"], heightTypes, 1); err != nil {
		p.fail(err, "height_type")
	} else if ok {
		c.HeightAGL = ht == 1
	}
	st, _, err := enum(o["op_status"], statuses, 15)
	p.fail(err, "op_status")
	c.Status = st
	// The F3411 timestamp counts tenths of a second after the hour; a feed
	// that puts something else there (a Unix time) loses it, not the fix.
	if ts, ok, err := number(o["timestamp"]); err == nil && ok && ts >= 0 && ts <= 3600 {
		c.Timestamp, c.HasTimestamp = ts, true
	}
}

func (p *parser) system(o map[string]any) {
	c := &p.c
	lat, lon, ok := p.latLon(o, [2]string{"operator_lat", "operator_lon"}, [2]string{"latitude", "longitude"},
		[2]string{"pilot_lat", "pilot_lon"})
	if ok {
		c.OperatorLat, c.OperatorLon, c.HasOperator = lat, lon, true
	}
	if lat, lon, ok := p.latLon(o, [2]string{"home_lat", "home_lon"}); ok {
		c.HomeLat, c.HomeLon, c.HasHome = lat, lon, true
	}
}

// esp32 reads what the ESP32 scanners add at the top level: the BLE
// extended-advertising RSSI and the advertiser address.
func (p *parser) esp32(doc map[string]any) {
	if o, ok := p.object(doc, "AUX_ADV_IND"); ok {
		p.macRSSI(o, "", "rssi")
	}
	if o, ok := p.object(doc, "aext"); ok {
		p.macRSSI(o, "AdvA", "")
	}
}

// product reads the product claim of a Basic ID (issue 25): the AntSDR's
// "description" (the product name it decoded, also its Self-ID text) and
// a DroneID product type number (a byte).
func (p *parser) product(o map[string]any) {
	if x, ok := p.num(o, "product_type", 0, 255); ok {
		if x != float64(uint8(x)) {
			p.fail(&Error{Reason: "type", Detail: "a product type is a whole number"}, "product_type")
			return
		}
		p.c.ProductType = uint16(x)
	}
	if s := p.str(o, "description"); s != "" && p.c.SelfID == "" {
		p.c.SelfID = s
	}
}

// flat reads the flat forwarder shape, filling only what the message keys
// did not.
func (p *parser) flat(doc map[string]any) {
	for _, k := range messageKeys {
		if _, nested := doc[k]; nested {
			return // the ESP32 shape: item read it
		}
	}
	p.basicID(doc)
	p.macRSSI(doc, first(doc, "mac", "MAC"), first(doc, "rssi", "RSSI"))
	p.location(doc)
	// Flat objects give the drone as lat/lon or latitude/longitude, so only
	// the operator's own spellings name the pilot here.
	if lat, lon, ok := p.latLon(doc, [2]string{"operator_lat", "operator_lon"}, [2]string{"pilot_lat", "pilot_lon"}); ok {
		p.c.OperatorLat, p.c.OperatorLon, p.c.HasOperator = lat, lon, true
	}
	if lat, lon, ok := p.latLon(doc, [2]string{"home_lat", "home_lon"}); ok {
		p.c.HomeLat, p.c.HomeLon, p.c.HasHome = lat, lon, true
	}
	if s := p.str(doc, "operator_id"); s != "" {
		p.c.OperatorID = s
	}
	if s := p.str(doc, first(doc, "description", "self_id")); s != "" {
		p.c.SelfID = s
	}
	if _, ok := doc["freq"]; ok {
		p.frequency(doc, "freq")
	}
}

// finish checks the claim is usable: it names a drone, or at least its
// transmitter (a BLE scanner prints each single-message advertisement on
// its own line, so a Location arrives alone with the MAC that an earlier
// Basic ID came with; the caller associates them), and its id fits a
// Basic ID.
func (p *parser) finish(c *Claim) error {
	if p.err != nil {
		return p.err
	}
	if p.c.ID == "" && p.c.MAC == "" {
		return &Error{Reason: "no_identity", Detail: "no drone id (Basic ID id, serial or id) and no MAC"}
	}
	if len(p.c.ID) > 20 {
		return &Error{Reason: "range", Field: "id", Detail: "a UAS id holds at most 20 bytes"}
	}
	*c = p.c
	return nil
}
