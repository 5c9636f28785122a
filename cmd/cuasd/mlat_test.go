package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/sim"
)

// mlatReference returns the sensors of the set's most common five-sensor
// combination, every sensor's position, and the rows those five heard.
func mlatReference(t *testing.T, set string) ([]int, map[int]testshared.MLATSensor, []testshared.MLATRow) {
	t.Helper()
	rows := testshared.MLATSet(t, set)
	combos := map[string]int{}
	for _, r := range rows {
		combos[comboKey(r.Sensors)]++
	}
	best := ""
	for k, n := range combos {
		if n > combos[best] || (n == combos[best] && k < best) {
			best = k
		}
	}
	var five []int
	for _, f := range strings.Split(best, ",") {
		id, _ := strconv.Atoi(f)
		five = append(five, id)
	}
	var out []testshared.MLATRow
	for _, r := range rows {
		if comboKey(r.Sensors) == best {
			out = append(out, r)
		}
	}
	return five, testshared.MLATSensors(t), out
}

func comboKey(ids []int) string {
	s := append([]int(nil), ids...)
	sort.Ints(s)
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s)), ","), "[]")
}

// beastRecord is a Beast record of frame with a Radarcape-style GPS
// timestamp (seconds of the UTC day in the top 18 bits, ns in the low 30).
func beastRecord(frame []byte, utcNs int64) []byte {
	f := adsb.BeastFrame{Type: adsb.BeastModeSShort, Len: uint8(len(frame)), Signal: 0x80}
	if len(frame) == 14 {
		f.Type = adsb.BeastModeSLong
	}
	copy(f.Data[:], frame)
	f.Timestamp = gpsTimestamp(utcNs)
	return adsb.AppendBeast(nil, &f)
}

// gpsTimestamp is a Radarcape-style Beast timestamp of a UTC time.
func gpsTimestamp(utcNs int64) uint64 {
	ofDay := utcNs % 86400e9
	return uint64(ofDay/1e9)<<30 | uint64(ofDay%1e9)
}

// TestMLATEndToEnd: the reference rows of one set's most common five
// sensors become Beast records with GPS timestamps, sent by five receivers
// (five TCP connections from 127.0.0.2–6, each its own sensor) to a
// running instance configured with those five receivers' real positions.
// A Mode S-only aircraft (DF4 altitude replies, no position in any frame)
// appears at its reference position with position_source mlat; an ADS-B
// aircraft whose DF17 positions are honest and then moved 1.5 km has the
// moved claim contradicted with its residual; /v1/sensors shows the
// receivers' clocks and receptions.
func TestMLATEndToEnd(t *testing.T) {
	five, pos, rows := mlatReference(t, "set_2.csv")
	if len(rows) < 2 {
		t.Fatalf("only %d rows heard by the most common five sensors", len(rows))
	}
	modeS, claim := rows[0], rows[1]
	for _, r := range rows[1:] {
		if r.Aircraft != modeS.Aircraft {
			claim = r
			break
		}
	}
	var cfg strings.Builder
	cfg.WriteString("sensors:\n")
	for i, id := range five {
		p := pos[id]
		fmt.Fprintf(&cfg, "  - {name: beast-in-127-0-0-%d, lat: %v, lon: %v, alt: %v, clock: gps}\n", i+2, p.Lat, p.Lon, p.Height)
	}
	file := filepath.Join(t.TempDir(), "cuasd.yaml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	base, lines, stop := startServeLines(t, "--config", file, "--beast-listen", "127.0.0.1:0?clock=gps")
	defer stop()
	addr := adapterAddr(t, lines)
	conns := make(map[int]net.Conn, len(five))
	for i, id := range five {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(i+2))}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Skipf("cannot connect from 127.0.0.%d (a loopback alias per receiver): %v", i+2, err)
		}
		defer c.Close()
		conns[id] = c
	}
	send := func(frame []byte, r testshared.MLATRow, at int64) {
		for i, id := range r.Sensors {
			// The row's times moved to now: the differences, which are
			// all multilateration uses, are the row's own.
			if _, err := conns[id].Write(beastRecord(frame, at+r.NS[i]-r.NS[0])); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Now().UnixNano() - 2e9
	const mAddr, cAddr = 0x3C0001, 0x3C0002
	even := sim.ADSBPosition(cAddr, claim.Lat, claim.Lon, claim.Baro/0.3048, false)
	odd := sim.ADSBPosition(cAddr, claim.Lat, claim.Lon, claim.Baro/0.3048, true)
	send(even[:], claim, now)
	send(odd[:], claim, now+200e6)
	df4 := sim.ModeSAltitudeReply(mAddr, modeS.Baro/0.3048)
	send(df4[:], modeS, now+300e6)
	waitTrack(t, base, "adsb:3C0002", func(tr mlatTrack) bool { return tr.Lat != nil })
	moved := sim.ADSBPosition(cAddr, claim.Lat+1500.0/111_320, claim.Lon, claim.Baro/0.3048, false)
	send(moved[:], claim, now+400e6)

	m := waitTrack(t, base, "adsb:3C0001", func(tr mlatTrack) bool { return tr.PositionSource == "mlat" })
	d := gate.Distance(gate.Point{Lat: *m.Lat, Lon: *m.Lon}, gate.Point{Lat: modeS.Lat, Lon: modeS.Lon})
	t.Logf("Mode S-only aircraft at %.5f,%.5f, %.0f m from its reference position; mlat %+v", *m.Lat, *m.Lon, d, *m.MLAT)
	if m.TimeSource != "gps" {
		t.Errorf("Mode S-only aircraft's time_source %q, want gps (its receivers are GPS-timed)", m.TimeSource)
	}
	if d > 300 || m.MLAT == nil || m.MLAT.Sensors < 4 {
		t.Errorf("Mode S-only aircraft %.0f m from its reference position (mlat %+v), want within 300 m from ≥ 4 sensors", d, m.MLAT)
	}
	checkMLATHistory(t, base, "adsb:3C0001", *m.Lat, *m.Lon)
	c := waitTrack(t, base, "adsb:3C0002", func(tr mlatTrack) bool {
		return tr.Verification != nil && tr.Verification.Status == "contradicted"
	})
	v := c.Verification
	t.Logf("moved claim: %+v", *v)
	if math.Abs(v.DistanceM-1500) > 400 || v.ResidualM < 100 || v.Sensors < 4 {
		t.Errorf("moved claim: distance %.0f m (moved 1,500 m), residual %.0f m, %d sensors", v.DistanceM, v.ResidualM, v.Sensors)
	}
	checkMLATSensors(t, base, len(five))
	checkClaimOnce(t, base, "adsb:3C0002", len(five))
}

// checkClaimOnce: the honest claim, every frame of it heard by each of
// the receivers, is one point of the aircraft's history (before, one per
// receiver: fusion took each receiver's copy as a fix).
func checkClaimOnce(t *testing.T, base, id string, receivers int) {
	t.Helper()
	var h struct {
		Points []struct{ Lat, Lon float64 } `json:"points"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r, body := get(t, base+"/v1/tracks/"+id+"/history")
		if r.StatusCode == 200 && json.Unmarshal(body, &h) == nil && len(h.Points) > 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(h.Points) != 1 {
		t.Errorf("%s: %d history points from one position claim heard by %d receivers, want 1: %+v", id, len(h.Points), receivers, h.Points)
	}
}

// checkMLATHistory: the multilaterated position reaches the track's
// history like any other.
func checkMLATHistory(t *testing.T, base, id string, lat, lon float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var body []byte
	for time.Now().Before(deadline) {
		var r *http.Response
		r, body = get(t, base+"/v1/tracks/"+id+"/history")
		if r.StatusCode == 200 && strings.Contains(string(body), strconv.FormatFloat(math.Round(lat*1e5)/1e5, 'f', -1, 64)[:6]) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("%s history after 20 s lacks the multilaterated position %.5f,%.5f: %s", id, lat, lon, body)
}

// mlatTrack is what the test reads of a track.
type mlatTrack struct {
	Lat, Lon       *float64
	PositionSource string `json:"position_source"`
	TimeSource     string `json:"time_source"`
	MLAT           *struct {
		Sensors   int     `json:"sensors"`
		ResidualM float64 `json:"residual_m"`
		ErrorM    float64 `json:"error_m"`
	} `json:"mlat"`
	Verification *struct {
		Status    string  `json:"status"`
		ResidualM float64 `json:"residual_m"`
		DistanceM float64 `json:"distance_m"`
		Sensors   int     `json:"sensors"`
	} `json:"verification"`
}

func waitTrack(t *testing.T, base, id string, ok func(mlatTrack) bool) mlatTrack {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var tr mlatTrack
	var body []byte
	for time.Now().Before(deadline) {
		r, b := get(t, base+"/v1/tracks/"+id)
		body = b
		if r.StatusCode == 200 && json.Unmarshal(b, &tr) == nil && ok(tr) {
			return tr
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, metrics := get(t, strings.TrimSuffix(base, "/api/cuas")+"/metrics")
	var mlatLines []string
	for _, l := range strings.Split(string(metrics), "\n") {
		if strings.HasPrefix(l, "cuasd_mlat_") {
			mlatLines = append(mlatLines, l)
		}
	}
	t.Fatalf("%s after 20 s: %s\n%s", id, body, strings.Join(mlatLines, "\n"))
	return tr
}

func adapterAddr(t *testing.T, lines []string) string {
	t.Helper()
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter beast="); ok {
			return a
		}
	}
	t.Fatalf("no beast adapter address in %q", lines)
	return ""
}

// checkMLATSensors: GET /v1/sensors lists the receivers with their GPS
// clocks and receptions.
func checkMLATSensors(t *testing.T, base string, n int) {
	t.Helper()
	_, body := get(t, base+"/v1/sensors")
	var out struct {
		Sensors []struct {
			ID    string `json:"id"`
			Kind  string `json:"kind"`
			Clock string `json:"clock"`
			MLAT  *struct {
				Receptions int `json:"receptions"`
			} `json:"mlat"`
		} `json:"sensors"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, s := range out.Sensors {
		if s.Kind == "modes" && s.Clock == "gps" && s.MLAT != nil && s.MLAT.Receptions > 0 {
			got++
		}
	}
	if got != n {
		t.Errorf("/v1/sensors: %d receivers with gps clocks and receptions, want %d: %s", got, n, body)
	}
}

// TestMLATConfig: the sensors block and --beast-connect's receiver options
// are checked before anything starts, each error naming the entry; a
// --beast-connect receiver with a position takes part in multilateration.
func TestMLATConfig(t *testing.T) {
	dir := t.TempDir()
	parse := func(yaml string, args ...string) (config, error) {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return parseConfig(append([]string{"--config", file}, args...), func(string) string { return "" }, io.Discard)
	}
	for _, c := range []struct{ yaml, want string }{
		{"sensors:\n  - {lat: 47, lon: 8, clock: gps}\n", "sensors[0]: name is required"},
		{"sensors:\n  - {name: a, lat: 97, lon: 8}\n", "sensors[0]: lat and lon"},
		{"sensors:\n  - {name: a, lat: 47, lon: 8, clock: atomic}\n", `sensors[0]: clock must be gps or 12mhz, got "atomic"`},
		{"sensors:\n  - {name: a, lat: 47, lon: 8}\n  - {name: a, lat: 47, lon: 9}\n", `sensors[1]: sensor "a" is configured twice`},
		{"sensors:\n  - {name: a, lat: 47, lon: 8, alt: 30000}\n", "sensors[0]: alt is the antenna's height"},
		{"sensors:\n  - {name: a, lat: 47, lon: 8, colour: red}\n", "field colour not found"},
	} {
		_, err := parse(c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.yaml, err, c.want)
		}
	}
	if _, err := parse("", "--beast-connect", "192.0.2.7:30005?sensor=roof&lat=47.1"); err == nil || !strings.Contains(err.Error(), "lat and lon") {
		t.Errorf("--beast-connect with lat only: %v", err)
	}
	if _, err := parse("", "--beast-connect", "192.0.2.7:30005?antenna=roof"); err == nil || !strings.Contains(err.Error(), `unknown option "antenna"`) {
		t.Errorf("--beast-connect with an unknown option: %v", err)
	}
	cfg, err := parse("sensors:\n  - {name: beast-in-192-0-2-8, lat: 47.2, lon: 8.1, alt: 520, clock: 12mhz}\n",
		"--beast-connect", "192.0.2.7:30005?sensor=roof&lat=47.1&lon=8.2&alt=510&clock=gps")
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.mlatSensors()
	if len(got) != 2 || got[1] != (MLATSensor{Name: "roof", Lat: 47.1, Lon: 8.2, Alt: 510, Clock: "gps", hasAlt: true, from: "--beast-connect"}) {
		t.Errorf("receivers %+v", got)
	}
	if spec, name, _, _ := connectSensor(cfg.BeastConnect.vals[0]); spec != "192.0.2.7:30005?clock=gps" || name != "roof" {
		t.Errorf("connect spec %q, sensor %q", spec, name)
	}
	// A listener placed for multilateration is one receiver's port: it
	// must name it.
	if _, err := parse("", "--beast-listen", "127.0.0.1:30004?lat=47.1&lon=8.2"); err == nil || !strings.Contains(err.Error(), "--beast-listen") || !strings.Contains(err.Error(), "?sensor=NAME") {
		t.Errorf("--beast-listen placed without a name: %v", err)
	}
	if _, err := parse("", "--avr-listen", "127.0.0.1:30001?sensor=x&lat=47.1&lon=8.2&clock=gps"); err == nil || !strings.Contains(err.Error(), "--avr-listen") {
		t.Errorf("--avr-listen with GPS clocks: %v", err)
	}
	cfg, err = parse("", "--beast-listen", "127.0.0.1:30004?sensor=mast&lat=47.3&lon=8.5&alt=480&clock=gps")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.mlatSensors(); len(got) != 1 || got[0] != (MLATSensor{Name: "mast", Lat: 47.3, Lon: 8.5, Alt: 480, Clock: "gps", hasAlt: true, from: "--beast-listen"}) {
		t.Errorf("--beast-listen receiver %+v", got)
	}
}

// TestBeastListenNamesAndPlacesItsReceiver: every connection to a
// --beast-listen port given ?sensor=NAME&lat=&lon=&alt= is that receiver,
// listed in /v1/sensors with its configured position and heard, whatever
// address it connects from (issue 31, item 1).
func TestBeastListenNamesAndPlacesItsReceiver(t *testing.T) {
	base, lines, stop := startServeLines(t, "--beast-listen", "127.0.0.1:0?sensor=mast-3&lat=47.3769&lon=8.5417&alt=455&clock=gps")
	defer stop()
	c, err := net.Dial("tcp", adapterAddr(t, lines))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	frame, _ := hex.DecodeString("8D406B902015A678D4D220AA4BDA") // pyModeS' identification squitter
	if _, err := c.Write(beastRecord(frame, time.Now().UnixNano())); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := get(t, base+"/v1/sensors")
		var list struct {
			Sensors []struct {
				ID       string `json:"id"`
				Kind     string `json:"kind"`
				Position *struct {
					Lat, Lon float64
					Source   string `json:"source"`
				} `json:"position"`
			} `json:"sensors"`
		}
		_ = json.Unmarshal(body, &list)
		_, track := get(t, base+"/v1/tracks/adsb:406B90")
		for _, s := range list.Sensors {
			if s.ID == "mast-3" && s.Kind == "modes" && s.Position != nil && s.Position.Lat == 47.3769 && s.Position.Source == "configured" &&
				strings.Contains(string(track), `"mast-3"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("want receiver mast-3, configured at 47.3769, heard on the track:\n%s\n%s", body, track)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FuzzConnectSensor: any --beast-connect value either is refused or gives
// a receiver whose position is in range once validated, and the clock
// spec it hands the Beast client carries no option but clock.
func FuzzConnectSensor(f *testing.F) {
	f.Add("192.0.2.7:30005?sensor=roof&lat=47.1&lon=8.2&alt=510&clock=gps")
	f.Add("rx:30005?clock=12mhz")
	f.Add("rx:30005?lat=1e400&lon=NaN")
	f.Add("rx:30005?sensor=rx&lat=NaN&lon=8&alt=1")
	f.Fuzz(func(t *testing.T, spec string) {
		clockSpec, _, m, err := connectSensor(spec)
		if err != nil {
			return
		}
		if _, q, ok := strings.Cut(clockSpec, "?"); ok && !strings.HasPrefix(q, "clock=") {
			t.Fatalf("%q: client spec %q", spec, clockSpec)
		}
		if m == nil {
			return
		}
		cfg := config{BeastConnect: stringList{vals: []string{spec}}}
		if errs := cfg.validateMLAT(nil); len(errs) == 0 && (math.IsNaN(m.Lat) || math.IsNaN(m.Lon) || math.Abs(m.Lat) > 90 || math.Abs(m.Lon) > 180) {
			t.Fatalf("%q: accepted receiver %+v", spec, *m)
		}
	})
}

// TestMLATConfigRefusesGuesses: every receiver setting an operator can
// get wrong is refused at start, naming where it was given (the flag or
// the sensors block), never taken as a guess: a NaN position (which
// /v1/sensors then failed to encode, a 500), a missing height (taken as
// 0 m, hundreds of metres off for most antennas), an option given twice
// (the first silently won), a name that is no NATS subject token (the
// frames then came from another sensor than the one configured), a
// listener's clock contradicting the sensors block, one name on two
// receiver flags, and a one-address flag given twice (the last silently
// replaced the first).
func TestMLATConfigRefusesGuesses(t *testing.T) {
	dir := t.TempDir()
	parse := func(yaml string, args ...string) error {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := parseConfig(append([]string{"--config", file}, args...), func(string) string { return "" }, io.Discard)
		return err
	}
	const rx1 = "sensors:\n  - {name: rx1, lat: 47.3769, lon: 8.5417, alt: 455.2, clock: gps}\n"
	for _, c := range []struct {
		yaml string
		args []string
		want []string // each in the error
	}{
		{"", []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&lat=NaN&lon=8.5&alt=1"}, []string{"--beast-listen", "lat and lon"}},
		{"", []string{"--beast-connect", "192.0.2.7:30005?sensor=rx1&lat=47&lon=Inf&alt=1"}, []string{"--beast-connect", "lat and lon"}},
		{"", []string{"--beast-connect", "192.0.2.7:30005?sensor=rx1&lat=47&lon=8&alt=NaN"}, []string{"--beast-connect", "alt"}},
		{"sensors:\n  - {name: rx1, lat: .nan, lon: 8.5, alt: 1}\n", nil, []string{"sensors[0]", "lat and lon"}},
		{"sensors:\n  - {name: rx1, lat: 47, lon: 8.5, alt: .inf}\n", nil, []string{"sensors[0]", "alt"}},
		{"", []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&lat=47&lon=8.5"}, []string{"--beast-listen", "alt is required"}},
		{"sensors:\n  - {name: rx1, lat: 47, lon: 8.5}\n", nil, []string{"sensors[0]", "alt is required"}},
		{"", []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&lat=47&lon=8.5&alt=1&lat=48"}, []string{"--beast-listen", `"lat" given twice`}},
		{"", []string{"--beast-connect", "192.0.2.7:30005?clock=gps&clock=12mhz"}, []string{"--beast-connect", `"clock" given twice`}},
		{"", []string{"--beast-listen", "127.0.0.1:30004?sensor=a.b&lat=47&lon=8.5&alt=1"}, []string{"--beast-listen", "sensor", "letters, digits"}},
		{"", []string{"--beast-connect", "192.0.2.7:30005?sensor=a*"}, []string{"--beast-connect", "letters, digits"}},
		{"sensors:\n  - {name: rx 3, lat: 47, lon: 8.5, alt: 1}\n", nil, []string{"sensors[0]", "letters, digits"}},
		{rx1, []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&clock=12mhz"}, []string{"--beast-listen", "rx1", "clock=gps"}},
		{rx1, []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&lat=47.5&lon=8.5&alt=400"}, []string{"--beast-listen", "rx1", "sensors block"}},
		{"", []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&lat=47&lon=8&alt=99999"}, []string{"--beast-listen", "alt is the antenna"}},
		{"", []string{"--beast-listen", "127.0.0.1:30004?sensor=rx1&lat=47&lon=8&alt=1", "--beast-connect", "192.0.2.7:30005?sensor=rx1"}, []string{"--beast-connect", `"rx1"`, "two receiver flags"}},
		{"", []string{"--avr-connect=192.0.2.7:30002", "-avr-connect", "192.0.2.8:30002"}, []string{"--avr-connect", "given twice"}},
	} {
		err := parse(c.yaml, c.args...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q %q: %v, want an error containing %q", c.yaml, c.args, err, w)
				break
			}
		}
		if err != nil && len(c.args) > 0 && c.yaml == "" && strings.Contains(err.Error(), "sensors[") {
			t.Errorf("%q: %v names a sensors block that is not there", c.args, err)
		}
	}
	// What is right stays accepted: a receiver named on its listener
	// and placed in the block, with the same clock.
	if err := parse(rx1, "--beast-listen", "127.0.0.1:30004?sensor=rx1&clock=gps"); err != nil {
		t.Errorf("listener naming a configured receiver: %v", err)
	}
}

// TestConnectSensorDefaultNameIsTheClients: a --beast-connect receiver
// placed without ?sensor= is named after its address as the Beast client
// names its frames' sensor; multilateration used to look for
// "192_0_2_7:30005" while the frames came from "192_0_2_7_30005", so the
// receiver was listed with no receptions and never took part.
func TestConnectSensorDefaultNameIsTheClients(t *testing.T) {
	cfg := config{BeastConnect: stringList{vals: []string{"192.0.2.7:30005?lat=47.1&lon=8.2&alt=510&clock=gps"}}}
	got := cfg.mlatSensors()
	want := ingest.ConnectModeS("192.0.2.7:30005", ingest.Beast, nil).Sensor
	if len(got) != 1 || got[0].Name != want {
		t.Fatalf("receivers %+v, want one named %q (the client's sensor)", got, want)
	}
}

// TestEachReceiverItsOwnPort: --beast-listen is repeatable, so each
// receiver can be given its own port, named and placed (the README's
// advice; the flag used to keep only its last value, so a second port
// silently replaced the first). Both receivers are listed with their
// positions and heard; a name given to two ports is refused at start.
func TestEachReceiverItsOwnPort(t *testing.T) {
	base, lines, stop := startServeLines(t,
		"--beast-listen", "127.0.0.1:0?sensor=mast-1&lat=47.3769&lon=8.5417&alt=455&clock=gps",
		"--beast-listen", "127.0.0.1:0?sensor=mast-2&lat=47.4502&lon=8.5622&alt=478&clock=gps")
	defer stop()
	var addrs []string
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter beast="); ok {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) != 2 {
		t.Fatalf("listeners %q, want two", addrs)
	}
	frame, _ := hex.DecodeString("8D406B902015A678D4D220AA4BDA")
	for _, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(beastRecord(frame, time.Now().UnixNano())); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, track := get(t, base+"/v1/tracks/adsb:406B90")
		_, list := get(t, base+"/v1/sensors")
		if strings.Contains(string(track), `"mast-1"`) && strings.Contains(string(track), `"mast-2"`) &&
			strings.Contains(string(list), `"lat":47.4502`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want the track heard by mast-1 and mast-2, both listed:\n%s\n%s", track, list)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err := parseConfig([]string{"--beast-listen", "127.0.0.1:0?sensor=rx1", "--beast-listen", "127.0.0.1:0?sensor=rx1"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"rx1"`) {
		t.Errorf("one name on two ports: %v", err)
	}
}
