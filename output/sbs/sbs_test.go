package sbs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
)

func ptr[T any](v T) *T { return &v }

var t0 = time.Date(2018, 4, 3, 19, 2, 28, 136e6, time.UTC)

func update(tr events.Track) *events.TrackEvent {
	return &events.TrackEvent{Header: events.Header{V: events.Version, Type: events.TypeTrackUpdate}, Track: tr}
}

func TestLinesAsDump1090WritesThem(t *testing.T) {
	tr := events.Track{TrackID: "adsb:400159", ICAO: "400159", Callsign: "BAW123", AltM: ptr(2625 * 0.3048), AltKind: "baro",
		Lat: ptr(59.744721), Lon: ptr(30.571923), SpeedMps: ptr(203 * 0.514444), HeadingDeg: ptr(314.2), VRateMps: ptr(-640 * 0.00508),
		Squawk: "7700", LastSeen: t0, PositionTime: ptr(t0)}
	var e Encoder
	out := string(e.AppendEvent(nil, update(tr), t0.Add(time.Second)))
	want := "MSG,1,1,1,400159,1,2018/04/03,19:02:28.136,2018/04/03,19:02:29.136,BAW123,,,,,,,,,,,\r\n" +
		"MSG,3,1,1,400159,1,2018/04/03,19:02:28.136,2018/04/03,19:02:29.136,,2625,,,59.74472,30.57192,,,,,,\r\n" +
		"MSG,4,1,1,400159,1,2018/04/03,19:02:28.136,2018/04/03,19:02:29.136,,,203,314,,,-640,,,,,\r\n" +
		"MSG,6,1,1,400159,1,2018/04/03,19:02:28.136,2018/04/03,19:02:29.136,,,,,,,,7700,,-1,,\r\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	for _, l := range strings.SplitAfter(out, "\r\n") {
		if l == "" {
			continue
		}
		if n := strings.Count(l, ","); n != 21 {
			t.Errorf("%d fields in %q", n+1, l)
		}
		var m adsb.SBSMessage
		if err := adsb.ParseSBS([]byte(l), &m); err != nil || m.Address != 0x400159 {
			t.Errorf("%q does not parse back: %v", l, err)
		}
	}
	// Unchanged: nothing. A new altitude alone: MSG,5.
	if b := e.AppendEvent(nil, update(tr), t0); len(b) != 0 {
		t.Fatalf("unchanged track sent %q", b)
	}
	tr.AltM = ptr(3000 * 0.3048)
	if got := string(e.AppendEvent(nil, update(tr), t0)); !strings.HasPrefix(got, "MSG,5,") || !strings.Contains(got, ",3000,") {
		t.Fatalf("altitude change: %q", got)
	}
	// Drones only when asked.
	d := update(events.Track{TrackID: "rid:ABC", Lat: ptr(1.0), Lon: ptr(2.0), LastSeen: t0})
	if b := e.AppendEvent(nil, d, t0); len(b) != 0 {
		t.Fatalf("drone sent without Drones: %q", b)
	}
	e.Drones = true
	if got := string(e.AppendEvent(nil, d, t0)); !strings.HasPrefix(got, "MSG,3,1,1,~") {
		t.Fatalf("drone: %q", got)
	}
}

// TestListenServesLines: with --sbs-reduce from the track events; by
// default one line per raw message (issue 30), here a DF17 identification
// (MSG,1) and an airborne velocity (MSG,4), each line
// at its message's time, never after the message arrived.
func TestListenServesLines(t *testing.T) {
	for _, reduce := range []bool{true, false} {
		t.Run(fmt.Sprint("reduce=", reduce), func(t *testing.T) { testListen(t, reduce) })
	}
}

func testListen(t *testing.T, reduce bool) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	o, err := Listen("127.0.0.1:0", false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	o.Reduce = reduce
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, output.Conn(nc), nopRep{}) }()
	conn, err := net.Dial("tcp", o.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitClients(t, o)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	if reduce {
		ev := update(events.Track{TrackID: "adsb:4CA1FA", ICAO: "4CA1FA", Lat: ptr(52.0), Lon: ptr(-6.0), LastSeen: t0})
		data, _ := json.Marshal(ev)
		if err := nc.Publish(bus.TrackSubject("adsb", "4CA1FA"), data); err != nil {
			t.Fatal(err)
		}
		l, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(l, "MSG,3,1,1,4CA1FA,") || !strings.HasSuffix(l, ",52.00000,-6.00000,,,,,,\r\n") {
			t.Fatalf("line %q err %v", l, err)
		}
	} else {
		ident, _ := hex.DecodeString("8D4840D6202CC371C32CE0576098")
		velocity, _ := hex.DecodeString("8D485020994409940838175B284F")
		var body []byte
		body = bus.AppendBeast(body, bus.BeastModeSLong, 12_000_000, 0x80, ident)
		body = bus.AppendBeast(body, bus.BeastModeSLong, 24_000_000, 0x80, velocity)
		msg := &nats.Msg{Subject: bus.RawSubject("adsb", "rx1"), Data: body, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderFraming, bus.FramingBeast)
		msg.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(t0.Add(2*time.Second).UnixNano(), 10))
		if err := nc.PublishMsg(msg); err != nil {
			t.Fatal(err)
		}
		l1, err1 := rd.ReadString('\n')
		l2, err2 := rd.ReadString('\n')
		// Heard a receiver's second apart, arriving together: neither is
		// placed after the arrival (the newest at it).
		if err1 != nil || err2 != nil || !strings.HasPrefix(l1, "MSG,1,1,1,4840D6,1,2018/04/03,19:02:30.136,") || !strings.Contains(l1, ",KLM1023,") ||
			!strings.HasPrefix(l2, "MSG,4,1,1,485020,1,2018/04/03,19:02:30.136,") || !strings.HasSuffix(l2, ",,,159,183,,,-832,,,,,0\r\n") {
			t.Fatalf("lines %q %q (%v %v)", l1, l2, err1, err2)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type nopRep struct{}

func (nopRep) Up()            {}
func (nopRep) Retrying(error) {}

func BenchmarkAppendEvent(b *testing.B) {
	tr := events.Track{TrackID: "adsb:400159", ICAO: "400159", Callsign: "BAW123", AltM: ptr(800.0), AltKind: "baro",
		Lat: ptr(59.744721), Lon: ptr(30.571923), SpeedMps: ptr(104.0), HeadingDeg: ptr(314.2), VRateMps: ptr(-3.2),
		Squawk: "1000", LastSeen: t0}
	ev := update(tr)
	var e Encoder
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		// A moving aircraft: a new position and speed on every update.
		*ev.Track.Lat += 1e-4
		*ev.Track.SpeedMps += 0.6
		buf = e.AppendEvent(buf[:0], ev, t0)
	}
	if !bytes.Contains(buf, []byte("MSG,3")) {
		b.Fatal("no position line")
	}
}

func TestEncoderForgetsSilentTracks(t *testing.T) {
	var e Encoder
	tr := events.Track{TrackID: "adsb:4CA1FA", ICAO: "4CA1FA", Lat: ptr(52.0), Lon: ptr(-6.0), LastSeen: t0}
	e.AppendEvent(nil, update(tr), t0)
	other := events.Track{TrackID: "adsb:4CA1FB", ICAO: "4CA1FB", LastSeen: t0}
	e.AppendEvent(nil, update(other), t0.Add(forgetAfter+2*time.Minute))
	if len(e.last) != 1 || e.last["adsb:4CA1FB"] == nil {
		t.Fatalf("remembered %d tracks, want only the one still heard", len(e.last))
	}
	// Forgotten, the track's position is sent again when it comes back.
	if got := string(e.AppendEvent(nil, update(tr), t0.Add(forgetAfter+2*time.Minute))); !strings.HasPrefix(got, "MSG,3,") {
		t.Fatalf("returning track: %q", got)
	}
}

// TestSimulatedTracksStayInside: simulated tracks (issue 34) are not
// written unless asked (IncludeSimulated, --demo-outputs), by the per-track
// output (Reduce: from track events; the per-message output checks the raw
// frames' Cuas-Simulated header). The simulated track's event is published
// first: the first line a client reads must be the received aircraft's, or
// the simulated one's when included.
func TestSimulatedTracksStayInside(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	sim := update(events.Track{TrackID: "adsb:406B90", ICAO: "406B90", Lat: ptr(52.3), Lon: ptr(4.7), LastSeen: t0, Simulated: true})
	real := update(events.Track{TrackID: "adsb:4CA1FA", ICAO: "4CA1FA", Lat: ptr(52.0), Lon: ptr(-6.0), LastSeen: t0})
	for _, include := range []bool{false, true} {
		o, err := Listen("127.0.0.1:0", false, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		o.IncludeSimulated(include)
		o.Reduce = true // the track events' simulated flag (the raw path checks the header)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = o.Run(ctx, output.Conn(nc), nopRep{}) }()
		conn, err := net.Dial("tcp", o.Addr())
		if err != nil {
			t.Fatal(err)
		}
		waitClients(t, o)
		for _, ev := range []*events.TrackEvent{sim, real} {
			data, _ := json.Marshal(ev)
			if err := nc.Publish(bus.TrackSubject("adsb", ev.Track.ICAO), data); err != nil {
				t.Fatal(err)
			}
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		l, err := bufio.NewReader(conn).ReadString('\n')
		if want := map[bool]string{false: ",4CA1FA,", true: ",406B90,"}[include]; err != nil || !strings.Contains(l, want) {
			t.Errorf("include=%v: first line %q (%v), want the %s one", include, l, err, want)
		}
		conn.Close()
		cancel()
		<-done // stopped: nothing of it allocates during the next test
	}
}
