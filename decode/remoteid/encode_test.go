package remoteid

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func f64(m map[string]any, k string) float64 {
	v, _ := m[k].(float64)
	return v
}

func u8(m map[string]any, k string) uint8 { return uint8(f64(m, k)) }

// encodeFromVector rebuilds the normative input of a valid vector from its
// "input" (Location) or "expect" fields and encodes it.
func encodeFromVector(t *testing.T, v vector) [MessageSize]byte {
	t.Helper()
	var exp map[string]any
	if err := json.Unmarshal(v.Expect, &exp); err != nil {
		t.Fatal(err)
	}
	var out [MessageSize]byte
	var err error
	switch v.Kind {
	case "basic_id":
		id, _ := hex.DecodeString(exp["uas_id_hex"].(string))
		err = EncodeBasicID(&out, 2, &BasicIDData{IDType: u8(exp, "id_type"), UAType: u8(exp, "ua_type"), UASID: id})
	case "location":
		src := exp
		if v.Input != nil {
			src = v.Input // the values handed to the library's encoder
		}
		d := LocationData{
			Status: u8(src, "status"), Direction: f64(src, "direction_deg"),
			SpeedHorizontal: f64(src, "speed_horizontal_mps"), SpeedVertical: f64(src, "speed_vertical_mps"),
			Latitude: f64(src, "latitude_deg"), Longitude: f64(src, "longitude_deg"),
			AltitudeBaro: f64(src, "altitude_baro_m"), AltitudeGeo: f64(src, "altitude_geo_m"),
			HeightType: u8(src, "height_type"), Height: f64(src, "height_m"), Timestamp: f64(src, "timestamp_s"),
			HorizAccuracy: u8(exp, "horiz_accuracy"), VertAccuracy: u8(exp, "vert_accuracy"),
			BaroAccuracy: u8(exp, "baro_accuracy"), SpeedAccuracy: u8(exp, "speed_accuracy"), TSAccuracy: u8(exp, "ts_accuracy"),
		}
		err = EncodeLocation(&out, 2, &d)
	case "auth":
		data, _ := hex.DecodeString(exp["auth_data_hex"].(string))
		err = EncodeAuth(&out, 2, &AuthData{
			Page: u8(exp, "data_page"), AuthType: u8(exp, "auth_type"), LastPageIndex: u8(exp, "last_page_index"),
			Length: u8(exp, "length"), Timestamp: uint32(f64(exp, "timestamp")), Data: data,
		})
	case "self_id":
		err = EncodeSelfID(&out, 2, &SelfIDData{DescType: u8(exp, "desc_type"), Desc: exp["desc"].(string)})
	case "system":
		err = EncodeSystem(&out, 2, &SystemData{
			OperatorLocationType: u8(exp, "operator_location_type"), ClassificationType: u8(exp, "classification_type"),
			OperatorLatitude: f64(exp, "operator_latitude_deg"), OperatorLongitude: f64(exp, "operator_longitude_deg"),
			AreaCount: uint16(f64(exp, "area_count")), AreaRadius: f64(exp, "area_radius_m"),
			AreaCeiling: f64(exp, "area_ceiling_m"), AreaFloor: f64(exp, "area_floor_m"),
			CategoryEU: u8(exp, "category_eu"), ClassEU: u8(exp, "class_eu"),
			OperatorAltitudeGeo: f64(exp, "operator_altitude_geo_m"), Timestamp: uint32(f64(exp, "timestamp")),
		})
	case "operator_id":
		err = EncodeOperatorID(&out, 2, &OperatorIDData{OperatorIDType: u8(exp, "operator_id_type"), OperatorID: exp["operator_id"].(string)})
	default:
		t.Fatalf("kind %s", v.Kind)
	}
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return out
}

// The encoder reproduces the reference library's bytes for every valid
// single-message vector, including its quantisation of the Location inputs.
func TestEncodeMatchesLibraryBytes(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t).Vectors {
		if !v.Valid || !singleKinds[v.Kind] {
			continue
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			got := encodeFromVector(t, v)
			if hex.EncodeToString(got[:]) != v.Hex {
				t.Errorf("encoded %x\n      want %s", got, v.Hex)
			}
		})
	}
	t.Logf("%d vectors re-encoded", n)
}

func TestEncodePackMatchesLibrary(t *testing.T) {
	for _, id := range []string{"pack_1_msg", "pack_5_msgs", "pack_9_msgs_max"} {
		t.Run(id, func(t *testing.T) {
			v := findVector(t, id)
			b := mustHex(t, v.Hex)
			var msgs [][MessageSize]byte
			for i := 0; i < int(b[2]); i++ {
				msgs = append(msgs, [MessageSize]byte(b[3+i*25:3+(i+1)*25]))
			}
			got, err := AppendPack(nil, 2, msgs...)
			if err != nil || hex.EncodeToString(got) != v.Hex {
				t.Errorf("%s: %x, %v", id, got, err)
			}
		})
	}
}

// The library's encoder refuses these inputs (encoder_rejects in the
// vectors); so must this encoder. Each case restates one reject's prose.
func TestEncoderRejects(t *testing.T) {
	vf := loadVectors(t)
	good := func() LocationData {
		return LocationData{Status: 2, Direction: 10, SpeedHorizontal: 5, SpeedVertical: 1, Latitude: 51.5, Longitude: -0.1,
			AltitudeBaro: 100, AltitudeGeo: 100, Height: 50, Timestamp: 100}
	}
	loc := func(f func(*LocationData)) func() error {
		return func() error {
			d := good()
			f(&d)
			var out [MessageSize]byte
			return EncodeLocation(&out, 2, &d)
		}
	}
	var locMsg, basicMsg [MessageSize]byte
	_ = EncodeLocation(&locMsg, 2, &LocationData{Direction: 1, Latitude: 1, Longitude: 1})
	_ = EncodeBasicID(&basicMsg, 2, &BasicIDData{IDType: 1, UASID: []byte("X")})
	cases := map[string]func() error{
		"location direction 360.5 (only 0..360 or 361)":                        loc(func(d *LocationData) { d.Direction = 360.5 }),
		"location direction -1":                                                loc(func(d *LocationData) { d.Direction = -1 }),
		"location speed_horizontal 254.5 (between max 254.25 and invalid 255)": loc(func(d *LocationData) { d.SpeedHorizontal = 254.5 }),
		"location speed_horizontal -0.1":                                       loc(func(d *LocationData) { d.SpeedHorizontal = -0.1 }),
		"location speed_vertical 62.5 (between 62 and invalid 63)":             loc(func(d *LocationData) { d.SpeedVertical = 62.5 }),
		"location speed_vertical -62.5":                                        loc(func(d *LocationData) { d.SpeedVertical = -62.5 }),
		"location latitude 90.0001":                                            loc(func(d *LocationData) { d.Latitude = 90.0001 }),
		"location altitude_geo -1000.5":                                        loc(func(d *LocationData) { d.AltitudeGeo = -1000.5 }),
		"location altitude_geo 31768":                                          loc(func(d *LocationData) { d.AltitudeGeo = 31768 }),
		"location timestamp 3600.1 (only 0..3600 or 65535)":                    loc(func(d *LocationData) { d.Timestamp = 3600.1 }),
		"system area_radius 2551 (> 2550)": func() error {
			var out [MessageSize]byte
			return EncodeSystem(&out, 2, &SystemData{AreaRadius: 2551, AreaCount: 1, AreaCeiling: -1000, AreaFloor: -1000, OperatorAltitudeGeo: -1000})
		},
		"auth page 0 length 18 with last_page_index 0 (capacity 17)": func() error {
			var out [MessageSize]byte
			return EncodeAuth(&out, 2, &AuthData{AuthType: 1, Length: 18})
		},
		"message pack with two Location messages": func() error {
			_, err := AppendPack(nil, 2, basicMsg, locMsg, locMsg)
			return err
		},
	}
	if len(vf.EncoderRejects) != len(cases) {
		t.Errorf("%d rejects in the vectors, %d cases here", len(vf.EncoderRejects), len(cases))
	}
	for _, r := range vf.EncoderRejects {
		f, ok := cases[r.Input]
		if !ok {
			t.Errorf("no case for reject %q", r.Input)
			continue
		}
		err := f()
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: encoder accepted it (library: %s)", r.Input, r.EncodeResult)
		}
	}
	// The control: the base input itself encodes.
	if err := loc(func(*LocationData) {})(); err != nil {
		t.Fatalf("control input refused: %v", err)
	}
}

// Round trip: for random inputs in range, encode then decode gives the input
// back within the format's resolution.
func TestRoundTripLocation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		in := LocationData{
			Status: uint8(r.IntN(5)), Direction: r.Float64() * 360, SpeedHorizontal: r.Float64() * 254.25,
			SpeedVertical: r.Float64()*124 - 62, Latitude: r.Float64()*180 - 90, Longitude: r.Float64()*360 - 180,
			AltitudeBaro: r.Float64()*32767 - 999, AltitudeGeo: r.Float64()*32767 - 999, HeightType: uint8(r.IntN(2)),
			Height: r.Float64()*2000 - 999, HorizAccuracy: uint8(r.IntN(13)), VertAccuracy: uint8(r.IntN(7)),
			BaroAccuracy: uint8(r.IntN(7)), SpeedAccuracy: uint8(r.IntN(5)), TSAccuracy: uint8(r.IntN(16)),
			Timestamp: r.Float64() * 3600,
		}
		var b [MessageSize]byte
		if err := EncodeLocation(&b, 2, &in); err != nil {
			t.Fatalf("encode %+v: %v", in, err)
		}
		var m Message
		if err := Decode(b[:], &m); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if m.Warnings != 0 {
			t.Fatalf("in-range input drew warnings %v: %+v", m.Warnings.List(), in)
		}
		out := m.Location.Data()
		dirDiff := math.Abs(math.Mod(out.Direction-in.Direction+540, 360) - 180)
		shTol := 0.125
		if in.SpeedHorizontal > 63.75 {
			shTol = 0.375
		}
		checks := []struct {
			name    string
			got, in float64
			tol     float64
		}{
			{"direction", dirDiff, 0, 0.5},
			{"speed_h", out.SpeedHorizontal, in.SpeedHorizontal, shTol + 1e-9},
			{"speed_v", out.SpeedVertical, in.SpeedVertical, 0.5},
			{"lat", out.Latitude, in.Latitude, 0.5e-7 + 1e-12},
			{"lon", out.Longitude, in.Longitude, 0.5e-7 + 1e-12},
			{"alt_baro", out.AltitudeBaro, in.AltitudeBaro, 0.5},
			{"alt_geo", out.AltitudeGeo, in.AltitudeGeo, 0.5},
			{"height", out.Height, in.Height, 0.5},
			{"timestamp", out.Timestamp, in.Timestamp, 0.05 + 1e-9},
		}
		for _, c := range checks {
			if math.Abs(c.got-c.in) > c.tol {
				t.Fatalf("%s: in %v out %v (tol %v)", c.name, c.in, c.got, c.tol)
			}
		}
		if out.Status != in.Status || out.HeightType != in.HeightType || out.HorizAccuracy != in.HorizAccuracy ||
			out.VertAccuracy != in.VertAccuracy || out.BaroAccuracy != in.BaroAccuracy ||
			out.SpeedAccuracy != in.SpeedAccuracy || out.TSAccuracy != in.TSAccuracy {
			t.Fatalf("enums: in %+v out %+v", in, out)
		}
	}
}

func TestRoundTripOtherKinds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	text := func(n int) string {
		b := make([]byte, r.IntN(n+1))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5F))
		}
		return string(b)
	}
	for i := 0; i < 5000; i++ {
		var b [MessageSize]byte
		var m Message
		version := uint8(r.IntN(3))

		bid := BasicIDData{IDType: uint8(1 + r.IntN(3)), UAType: uint8(r.IntN(16)), UASID: []byte(text(20))}
		if len(bid.UASID) == 0 {
			bid.UASID = []byte("A")
		}
		mustRT(t, EncodeBasicID(&b, version, &bid), b, &m)
		if id, ok := m.BasicID.UASID(); !ok || id != string(bid.UASID) || m.BasicID.IDType != bid.IDType || m.BasicID.UAType != bid.UAType {
			t.Fatalf("basic id: in %+v out %+v", bid, m.BasicID)
		}

		sid := SelfIDData{DescType: 0, Desc: text(23)}
		mustRT(t, EncodeSelfID(&b, version, &sid), b, &m)
		if d, ok := m.SelfID.Description(); !ok || d != sid.Desc {
			t.Fatalf("self id: in %q out %q", sid.Desc, d)
		}

		oid := OperatorIDData{OperatorID: text(20)}
		mustRT(t, EncodeOperatorID(&b, version, &oid), b, &m)
		if d, ok := m.OperatorID.Text(); !ok || d != oid.OperatorID {
			t.Fatalf("operator id: in %q out %q", oid.OperatorID, d)
		}

		page := uint8(r.IntN(16))
		data := make([]byte, 23)
		for j := range data {
			data[j] = byte(r.IntN(256))
		}
		ad := AuthData{Page: page, AuthType: uint8(r.IntN(6)), Data: data}
		if page == 0 {
			ad.LastPageIndex = uint8(r.IntN(16))
			ad.Length = uint8(min(255, r.IntN(17+23*int(ad.LastPageIndex)+1)))
			ad.Timestamp = r.Uint32()
			ad.Data = data[:17]
		}
		mustRT(t, EncodeAuth(&b, version, &ad), b, &m)
		a := m.Auth
		if a.Page != ad.Page || a.AuthType != ad.AuthType || a.LastPageIndex != ad.LastPageIndex ||
			a.Length != ad.Length || a.Timestamp != ad.Timestamp || string(a.Data[:a.DataLen]) != string(ad.Data) {
			t.Fatalf("auth: in %+v out %+v", ad, a)
		}

		sd := SystemData{
			OperatorLocationType: uint8(r.IntN(3)), ClassificationType: uint8(r.IntN(2)),
			OperatorLatitude: r.Float64()*180 - 90, OperatorLongitude: r.Float64()*360 - 180,
			AreaCount: uint16(r.IntN(65536)), AreaRadius: float64(r.IntN(256) * 10),
			AreaCeiling: r.Float64()*1000 + 500, AreaFloor: r.Float64() * 400,
			CategoryEU: uint8(r.IntN(4)), ClassEU: uint8(r.IntN(8)),
			OperatorAltitudeGeo: r.Float64()*5000 - 500, Timestamp: r.Uint32(),
		}
		mustRT(t, EncodeSystem(&b, version, &sd), b, &m)
		out := m.System.Data()
		if math.Abs(out.OperatorLatitude-sd.OperatorLatitude) > 0.5e-7+1e-12 ||
			math.Abs(out.OperatorLongitude-sd.OperatorLongitude) > 0.5e-7+1e-12 ||
			math.Abs(out.AreaCeiling-sd.AreaCeiling) > 0.5 || math.Abs(out.AreaFloor-sd.AreaFloor) > 0.5 ||
			math.Abs(out.OperatorAltitudeGeo-sd.OperatorAltitudeGeo) > 0.5 || out.AreaRadius != sd.AreaRadius ||
			out.AreaCount != sd.AreaCount || out.CategoryEU != sd.CategoryEU || out.ClassEU != sd.ClassEU ||
			out.OperatorLocationType != sd.OperatorLocationType || out.ClassificationType != sd.ClassificationType {
			t.Fatalf("system: in %+v out %+v", sd, out)
		}
		// The timestamp exists from version 2 on; earlier versions decode it as absent.
		if _, ok := m.System.TimestampUnix(); ok != (version >= 2) || (ok && out.Timestamp != sd.Timestamp) {
			t.Fatalf("system timestamp v%d: in %d out %d ok %v", version, sd.Timestamp, out.Timestamp, ok)
		}
	}
}

func mustRT(t *testing.T, err error, b [MessageSize]byte, m *Message) {
	t.Helper()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if err := Decode(b[:], m); err != nil {
		t.Fatalf("decode %x: %v", b, err)
	}
}
