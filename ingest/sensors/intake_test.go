package sensors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/internal/natstest"
)

const ridMsg = `[{"Basic ID": {"id_type": "Serial Number (ANSI/CTA-2063-A)", "ua_type": 2, "id": "1581F5EXAMPLE001", "MAC": "AA:BB:CC:11:22:01", "RSSI": -63}}, {"Location/Vector Message": {"latitude": 51.47021, "longitude": -0.45311, "geodetic_altitude": 110.5, "speed": 11.25, "direction": 95, "op_status": "Airborne"}}, {"System Message": {"latitude": 51.46950, "longitude": -0.45502}}]`

// TestIntake: a claim is published on the protocol its kind says, with
// the sensor's RSSI as the frame's signal; a status only updates the
// registry; a refusal is counted under rejected_<reason> for the sensor.
func TestIntake(t *testing.T) {
	reg := sensors.NewRegistry(0)
	sink := sensorstest.NewSink()
	in := sensors.Intake{Adapter: "test", Registry: reg}
	ctx := context.Background()
	if err := in.Handle(ctx, sink, "s1", []byte(ridMsg)); err != nil {
		t.Fatal(err)
	}
	dji := sensors.Intake{Adapter: "test", Hint: droneclaim.KindDJI, Registry: reg}
	if err := dji.Handle(ctx, sink, "s1", []byte(ridMsg)); err != nil {
		t.Fatal(err)
	}
	if err := in.Handle(ctx, sink, "s1", []byte(`{"serial_number": "kit", "gps_data": {"latitude": 1.5, "longitude": 2.5}}`)); err != nil {
		t.Fatal(err)
	}
	if err := in.Handle(ctx, sink, "s1", []byte(`{"id": 1`)); droneclaim.ReasonOf(err) != "invalid_json" {
		t.Fatalf("bad input: %v", err)
	}
	f := sink.Frames()
	if len(f) != 2 || f[0].Protocol != "remoteid" || f[1].Protocol != "dji" || f[0].Frame.Signal != -63 ||
		f[0].Frame.Carrier != sensors.Carrier || f[0].Sensor != "s1" {
		t.Fatalf("frames %+v", f)
	}
	s, _ := reg.Get("s1")
	if s.Messages != 3 || s.Rejected["invalid_json"] != 1 || s.Position == nil || s.Position.Lat != 1.5 || s.Down {
		t.Errorf("registry %+v", s)
	}
	if d := sink.Drops(); d["remoteid/rejected_invalid_json"] != 1 {
		t.Errorf("drops %v", d)
	}
}

// TestAssociation: a BLE scanner's Location line, which names only its
// MAC, gets the UAS id of the Basic ID heard from that MAC on the same
// sensor; from an unknown MAC, or on another sensor, it is refused.
func TestAssociation(t *testing.T) {
	sink := sensorstest.NewSink()
	in := sensors.Intake{Adapter: "test"}
	ctx := context.Background()
	basic := `{"MAC": "aa:bb:cc:00:00:07", "Basic ID": {"id": "BLE0007", "ua_type": 2}}`
	loc := `{"MAC": "aa:bb:cc:00:00:07", "Location/Vector Message": {"latitude": 51.5, "longitude": -0.1}}`
	if err := in.Handle(ctx, sink, "s2", []byte(loc)); droneclaim.ReasonOf(err) != "no_identity" {
		t.Fatalf("location before any Basic ID: %v", err)
	}
	for _, m := range []string{basic, loc} {
		if err := in.Handle(ctx, sink, "s1", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Handle(ctx, sink, "s2", []byte(loc)); droneclaim.ReasonOf(err) != "no_identity" {
		t.Fatalf("another sensor's MAC: %v", err)
	}
	f := sink.Frames()
	if len(f) != 2 || len(f[1].Obs) != 1 || f[1].Obs[0].Key != "BLE0007" || f[1].Obs[0].Lat != 51.5 {
		t.Fatalf("frames %+v", f)
	}
}

// TestDeadLetters: a refused message is kept in CUAS_DEAD with its reason
// and sensor (cut at 4 KiB), beside the frames the decoders refuse.
func TestDeadLetters(t *testing.T) {
	srv := natstest.StartWithStreams(t, bus.DefaultLimits())
	pub := ingest.NewPublisher(srv.JetStream(), nil)
	in := sensors.Intake{Adapter: "test"}
	ctx := context.Background()
	stream, err := srv.JS.Stream(ctx, bus.StreamDead)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, msg, reason string
		kept              int
	}{
		{"range", `{"id": "X1", "lat": 91, "lon": 0}`, "rejected_range", 33},
		{"long garbage", strings.Repeat("x", 10000), "rejected_invalid_json", 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := in.Handle(ctx, pub, "kit-9", []byte(tc.msg)); droneclaim.ReasonOf(err) != strings.TrimPrefix(tc.reason, "rejected_") {
				t.Fatalf("Handle: %v", err)
			}
			m, err := stream.GetLastMsgForSubject(ctx, bus.DeadSubject("remoteid"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(m.Header.Get(bus.HeaderReason), tc.reason+": ") || m.Header.Get(bus.HeaderSensor) != "kit-9" ||
				len(m.Data) != tc.kept || string(m.Data) != tc.msg[:tc.kept] {
				t.Errorf("dead letter %v %q", m.Header, m.Data)
			}
		})
	}
}

// BenchmarkIntakeJetStream is a sensor message all the way into CUAS_RAW
// on an embedded JetStream: parse, re-encode, publish and wait for the
// acknowledgement (one message at a time, as the inputs do).
func BenchmarkIntakeJetStream(b *testing.B) {
	srv := natstest.StartWithStreams(b, bus.DefaultLimits())
	pub := ingest.NewPublisher(srv.JetStream(), nil)
	in := sensors.Intake{Adapter: "bench"}
	msg := []byte(ridMsg)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := in.Handle(ctx, pub, "bench", msg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// TestRegistryDown: a sensor is down until heard, up while heard within
// its limit (its own, from expect=, or the registry's), down after.
func TestRegistryDown(t *testing.T) {
	sp, err := sensors.ParseSpec("127.0.0.1:1?sensor=a&expect=2s")
	if err != nil || sp.Expect.Seconds() != 2 {
		t.Fatalf("%+v %v", sp, err)
	}
	reg := sensors.NewRegistry(time.Hour)
	reg.Configure("a", "test", nil, sp.Expect)
	reg.Configure("b", "test", nil, 0)
	if s, _ := reg.Get("a"); !s.Down || s.ExpectSeconds != 2 {
		t.Errorf("never heard: %+v", s)
	}
	in := sensors.Intake{Adapter: "test", Registry: reg}
	old := time.Now().Add(-time.Minute)
	for _, id := range []string{"a", "b"} {
		if err := in.Handle(context.Background(), sensorstest.NewSink(), id, []byte(ridMsg)); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := reg.Get("a"); s.Down {
		t.Errorf("just heard: %+v", s)
	}
	reg.SetClock(func() time.Time { return old.Add(2 * time.Minute) })
	if a, _ := reg.Get("a"); !a.Down {
		t.Errorf("silent past its 2 s: %+v", a)
	}
	if b, _ := reg.Get("b"); b.Down {
		t.Errorf("silent within the registry's hour: %+v", b)
	}
	// NaN and Inf passed the range checks, and /v1/sensors could then
	// not encode the sensor (a 500); an option given twice took the first.
	for _, bad := range []string{"x?expect=soon", "x?expect=-1s", "x?lat=1",
		"x?lat=NaN&lon=8", "x?lat=47&lon=-Inf", "x?lat=47&lon=8&alt=NaN", "x?lat=47&lon=8&alt=+Inf",
		"x?lat=47&lon=8&lat=48", "x?sensor=a&sensor=b"} {
		if _, err := sensors.ParseSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRegistryReportedPosition (issue 31): a Mode S receiver's own
// position is shown as reported; a configured one is kept whatever the
// receiver says; a receiver counted by multilateration is up once heard,
// on /readyz (LocalDown) as on /v1/sensors.
func TestRegistryReportedPosition(t *testing.T) {
	reg := sensors.NewRegistry(time.Minute)
	reg.Configure("roof", "modes", &sensors.Position{Lat: 47.1, Lon: 8.2, AltM: 510, HasAlt: true}, 0)
	reg.ReportPosition("roof", "modes", sensors.Position{Lat: 47.9, Lon: 8.9, AltM: 600, HasAlt: true})
	reg.ReportPosition("mast", "modes", sensors.Position{Lat: 47.3, Lon: 8.5, AltM: 520, HasAlt: true})
	roof, _ := reg.Get("roof")
	mast, _ := reg.Get("mast")
	if p := roof.Position; p == nil || p.Source != "configured" || p.Lat != 47.1 {
		t.Errorf("roof: %+v, want its configured position", p)
	}
	if p := mast.Position; p == nil || p.Source != "reported" || p.Lat != 47.3 || p.AltM != 520 {
		t.Errorf("mast: %+v, want its reported position", p)
	}
	if down := reg.LocalDown(); len(down) != 2 {
		t.Errorf("never heard: %d down, want 2", len(down))
	}
	reg.HeardUntil("mast", "modes", time.Now(), 42)
	reg.HeardUntil("roof", "modes", time.Now(), 7)
	if down := reg.LocalDown(); len(down) != 0 {
		t.Errorf("heard: %+v down", down)
	}
	if m, _ := reg.Get("mast"); m.Messages != 42 || m.Down {
		t.Errorf("mast: %+v", m)
	}
}
