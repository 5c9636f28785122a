package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/ingest/pcap"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/internal/testshared"
)

// pcapDrone is the UAS id and first position the capture claims.
func pcapDrone(t *testing.T, file string) (id string, lat, lon float64) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := pcap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for id == "" || lat == 0 {
		p, err := rd.Next()
		if err != nil {
			t.Fatalf("no drone in %s (id %q)", file, id)
		}
		var f remoteid.Frame
		if p.Medium != pcap.MediumWiFi || remoteid.DecodeCarrier(remoteid.CarrierAuto, p.Data, &f) != nil {
			continue
		}
		o := remoteid.FrameObservation(&f, p.Time.UnixNano(), "x")
		if o.UASID != "" {
			id = o.UASID
		}
		if o.HasPosition && lat == 0 {
			lat, lon = o.Lat, o.Lon
		}
	}
	return id, lat, lon
}

// startPublisher runs the pyzmq publisher of package zmq's tests (the real
// libzmq) over files and returns its address.
func startPublisher(t *testing.T, files ...string) string {
	t.Helper()
	py := sensorstest.PythonZMQ(t)
	cmd := exec.Command(py, append([]string{"../../ingest/sensors/zmq/testdata/publisher.py"}, files...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("publisher printed no port: %v", err)
	}
	return "127.0.0.1:" + strings.TrimSpace(port)
}

// TestZMQAndPcapAreOneTrack: a drone heard by a WarDragon kit (its Remote
// ID feed, from a real libzmq publisher) and in a Remote ID capture at the
// same time is one track rid:<UAS id> listing both sensors; the kit's DJI
// feed makes a dji:<serial> track with the pilot as operator; the kit's
// status places it in /v1/sensors.
func TestZMQAndPcapAreOneTrack(t *testing.T) {
	capture := testshared.Path(t, "data", "remoteid", "odid_wifi_bcn_sample.pcap")
	id, lat, lon := pcapDrone(t, capture)
	feed := filepath.Join(t.TempDir(), "feed.jsonl")
	msg := fmt.Sprintf(`[{"Basic ID": {"id_type": "Serial Number (ANSI/CTA-2063-A)", "ua_type": 2, "id": %q, "MAC": "AA:BB:CC:00:00:01", "RSSI": "-60 dBm"}}, `+
		`{"Location/Vector Message": {"latitude": "%.7f", "longitude": "%.7f", "geodetic_altitude": "50 m", "speed": "2.5 m/s", "op_status": "Airborne"}}]`, id, lat, lon)
	// Issue 25: a DroneID claim that relays the product type number, not
	// its name.
	msg += "\n" + `[{"Basic ID": {"id": "3NZEXAMPLEDJI067", "product_type": 67, "RSSI": -80}}, ` +
		`{"Location/Vector Message": {"latitude": 51.4690, "longitude": -0.4610, "geodetic_altitude": 40}}, {"Frequency Message": {"frequency": 5745000000}}]`
	if err := os.WriteFile(feed, []byte(msg+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startPublisher(t, feed, testshared.Path(t, "data", "sensors", "wardragon_dji.jsonl"),
		testshared.Path(t, "data", "sensors", "wardragon_status.json"))
	base, natsURL, stop := startServeNATS(t, "--zmq-connect", "tcp://"+addr+"?sensor=kit-1")
	defer stop()
	replayFile(t, natsURL, capture, "pcap")
	waitTracks(t, base, "?protocol=remoteid", func(ts []apiTrack) bool {
		return len(ts) == 1 && ts[0].ID == "rid:"+id && slices.Contains(ts[0].Sensors, "kit-1") && len(ts[0].Sensors) == 2
	})
	waitTracks(t, base, "?protocol=dji", func(ts []apiTrack) bool {
		return len(ts) == 2 && ts[0].ID == "dji:3NZEXAMPLEDJI003" && ts[0].Lat != nil && *ts[0].Lat == 51.46811
	})
	_, body := get(t, base+"/v1/tracks/dji:3NZEXAMPLEDJI003")
	var tr struct {
		Protocols     []string              `json:"protocols"`
		OperatorLat   *float64              `json:"operator_lat"`
		Product       *events.Product       `json:"product"`
		SensorSignals []events.SensorSignal `json:"sensor_signals"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.OperatorLat == nil || *tr.OperatorLat != 51.4679 ||
		!slices.Equal(tr.Protocols, []string{"dji"}) {
		t.Errorf("dji track: %s", body)
	}
	// Issue 25: the Self-ID text "DJI Mavic 3" names the database's Mavic 3;
	// the kit's RSSI is the track's, per sensor.
	if p := tr.Product; p == nil || p.ReferenceID != "dji-mavic-3" || p.MatchedBy != "model_name" || p.Claim != "DJI Mavic 3" {
		t.Errorf("dji product: %s", body)
	}
	if len(tr.SensorSignals) != 1 || tr.SensorSignals[0].Sensor != "kit-1" || tr.SensorSignals[0].RSSIDBm == nil || *tr.SensorSignals[0].RSSIDBm != -76 {
		t.Errorf("dji sensor signals: %s", body)
	}
	_, body = get(t, base+"/v1/tracks/dji:3NZEXAMPLEDJI067")
	tr.Product = nil
	if err := json.Unmarshal(body, &tr); err != nil || tr.Product == nil || tr.Product.ReferenceID != "dji-matrice-30" ||
		tr.Product.MatchedBy != "dji_product_type" || tr.Product.ProductType == nil || *tr.Product.ProductType != 67 {
		t.Errorf("product type 67: %s", body)
	}
	_, body = get(t, base+"/v1/tracks/rid:"+id)
	tr.SensorSignals = nil
	if err := json.Unmarshal(body, &tr); err != nil || !slices.ContainsFunc(tr.SensorSignals, func(s events.SensorSignal) bool {
		return s.Sensor == "kit-1" && s.RSSIDBm != nil && *s.RSSIDBm == -60
	}) {
		t.Errorf("rid sensor signals: %s", body)
	}
	_, body = get(t, base+"/v1/sensors/kit-1")
	var s struct {
		Position struct {
			Lat    float64 `json:"lat"`
			Source string  `json:"source"`
		} `json:"position"`
	}
	if err := json.Unmarshal(body, &s); err != nil || s.Position.Lat != 51.47001 || s.Position.Source != "reported" {
		t.Errorf("sensor: %s", body)
	}
	// Issue 25: the sensor registry stage names this instance as the one
	// that heard the kit (and publishes it on cuas.sensor.kit-1).
	var reg struct {
		Instance string   `json:"instance"`
		HeardBy  []string `json:"heard_by"`
	}
	for deadline := time.Now().Add(20 * time.Second); reg.Instance == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sensor never names its instance: %s", body)
		}
		_, body = get(t, base+"/v1/sensors/kit-1")
		if err := json.Unmarshal(body, &reg); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(reg.HeardBy, []string{reg.Instance}) {
		t.Errorf("heard_by: %s", body)
	}
}

// TestSensorFlagErrors: a bad sensor flag stops the start with a message
// naming the flag and what is wrong.
func TestSensorFlagErrors(t *testing.T) {
	tests := []struct{ flag, value, want string }{
		{"--zmq-connect", "udp://127.0.0.1:4224", "tcp://HOST:PORT"},
		{"--zmq-connect", "drone=tcp://127.0.0.1:4224", "unknown feed kind"},
		{"--json-udp", "127.0.0.1:0?colour=red", "unknown option"},
		{"--serial", "/dev/ttyUSB0:0", "baud rate"},
		{"--wifi-capture", "lo", "monitor"},
	}
	for _, tc := range tests {
		t.Run(tc.flag+" "+tc.value, func(t *testing.T) {
			args := []string{"serve", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--nats-listen", "off", tc.flag, tc.value}
			// A start that wrongly succeeds is ended, and reported, by the timeout.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			err := run(ctx, args, func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("err %v, want %q and %s", err, tc.want, tc.flag)
			}
		})
	}
}

// TestSensorsDown: /readyz names a configured sensor never heard, and one
// silent past its limit, as degraded reasons; a heard one is not named.
func TestSensorsDown(t *testing.T) {
	if got := sensorsDown(nil); got != nil {
		t.Errorf("no registry: %v", got)
	}
	reg := sensors.NewRegistry(time.Minute)
	reg.Configure("kit-1", "wardragon", nil, 0)
	reg.Configure("esp-1", "serial", nil, 0)
	in := sensors.Intake{Adapter: "serial", Registry: reg}
	if err := in.Handle(t.Context(), sensorstest.NewSink(), "esp-1", []byte(`{"id": "X1", "lat": 51, "lon": 0}`)); err != nil {
		t.Fatal(err)
	}
	got := sensorsDown(reg)
	if len(got) != 1 || !strings.Contains(got[0], "kit-1") || !strings.Contains(got[0], "not heard yet") {
		t.Errorf("down: %q", got)
	}
	reg.SetClock(func() time.Time { return time.Now().Add(time.Hour) })
	if got := sensorsDown(reg); len(got) != 2 || !strings.Contains(strings.Join(got, ";"), "esp-1 (serial) silent since") {
		t.Errorf("down an hour later: %q", got)
	}
}
