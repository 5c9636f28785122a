package bus

import (
	"math"
	"strings"
	"testing"
)

// TestParseSensorPosition: what a receiver may state as its antenna's
// position, and every way a value is refused, each error naming the
// problem.
func TestParseSensorPosition(t *testing.T) {
	for _, c := range []struct {
		in   string
		want SensorPosition
		err  string // "" accepted; else a part of the error
	}{
		{in: "47.3769,8.5417,520", want: SensorPosition{47.3769, 8.5417, 520}},
		{in: " -33.86 , 151.21 , 58.5 ", want: SensorPosition{-33.86, 151.21, 58.5}},
		{in: "51.47,-0.4543,-12", want: SensorPosition{51.47, -0.4543, -12}},
		{in: "90,180,9000", want: SensorPosition{90, 180, 9000}},
		{in: "-90,-180,-500", want: SensorPosition{-90, -180, -500}},
		{in: "4.7e1,8,0", want: SensorPosition{47, 8, 0}},
		{in: "0,8.5,400", want: SensorPosition{0, 8.5, 400}},
		{in: "", err: "want LAT,LON,ALT"},
		{in: "47.3,8.5", err: "want LAT,LON,ALT"},
		{in: "47.3,8.5,520,1", err: "want LAT,LON,ALT"},
		{in: "47.3;8.5;520", err: "want LAT,LON,ALT"},
		{in: "47.3,,520", err: `lon "" is not a decimal number`},
		{in: "N47.3,8.5,520", err: `lat "N47.3" is not a decimal number`},
		{in: "NaN,8.5,520", err: `lat "NaN" is not a decimal number`},
		{in: "47,Inf,520", err: `lon "Inf" is not a decimal number`},
		{in: "0x1p5,8,520", err: `lat "0x1p5" is not a decimal number`},
		{in: "4_7,8,520", err: `lat "4_7" is not a decimal number`},
		{in: "47,8,1e999", err: `alt "1e999" is not a finite number`},
		{in: "47,8,--3", err: `alt "--3" is not a finite number`},
		{in: "47,8,.", err: `alt "." is not a decimal number`},
		{in: "90.0001,8,520", err: "lat out of range"},
		{in: "47,-180.5,520", err: "lon out of range"},
		{in: "47,8,1706", want: SensorPosition{47, 8, 1706}},
		{in: "47,8,9001", err: "alt out of range"},
		{in: "47,8,-501", err: "alt out of range"},
		{in: "0,0,0", err: "without a position fix"},
		{in: "0.0,-0,100", err: "without a position fix"},
		{in: strings.Repeat("1", 81), err: "at most 80"},
	} {
		got, err := ParseSensorPosition(c.in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && got != c.want:
			t.Errorf("%q: %+v, want %+v", c.in, got, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v (%+v), want an error containing %q", c.in, err, got, c.err)
		case c.err != "" && !strings.Contains(err.Error(), HeaderSensorPosition):
			t.Errorf("%q: error %q does not name the header", c.in, err)
		}
	}
}

// FuzzSensorPosition: a value is either refused or gives a finite
// position in range that reads back the same from its String.
func FuzzSensorPosition(f *testing.F) {
	for _, s := range []string{"47.3769,8.5417,520", " -33.86 , 151.21 , 58.5 ", "0,0,0", "NaN,1,2", "1e999,1,1", "90,180,9000", "4.7e1,8,-500"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseSensorPosition(s)
		if err != nil {
			if len(err.Error()) > 400 {
				t.Fatalf("%q: an error of %d bytes", s, len(err.Error()))
			}
			return
		}
		for _, v := range []float64{p.Lat, p.Lon, p.AltM} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q: accepted %+v", s, p)
			}
		}
		if math.Abs(p.Lat) > 90 || math.Abs(p.Lon) > 180 || p.AltM < MinSensorAltM || p.AltM > MaxSensorAltM || (p.Lat == 0 && p.Lon == 0) {
			t.Fatalf("%q: accepted %+v out of range", s, p)
		}
		if q, err := ParseSensorPosition(p.String()); err != nil || q != p {
			t.Fatalf("%q: %+v reads back as %+v, %v", s, p, q, err)
		}
	})
}

// TestStatedPosition: a message's Cuas-Sensor-Position values give one
// position, none, or a refusal (two values, or a malformed one).
func TestStatedPosition(t *testing.T) {
	for _, c := range []struct {
		vs     []string
		ok     bool
		refuse bool
	}{
		{nil, false, false},
		{[]string{"47.3769,8.5417,455"}, true, false},
		{[]string{"47.3769,8.5417,455", "47.3769,8.5417,455"}, false, true},
		{[]string{"47.3769,8.5417"}, false, true},
	} {
		p, ok, err := StatedPosition(c.vs)
		if ok != c.ok || (err != nil) != c.refuse || ok && p != (SensorPosition{Lat: 47.3769, Lon: 8.5417, AltM: 455}) {
			t.Errorf("%q: %+v, %v, %v", c.vs, p, ok, err)
		}
	}
}
