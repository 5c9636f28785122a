package worker

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/sim"
)

// flightFrame is one fabricated squitter: its Beast timestamp, its arrival
// and where it puts the aircraft.
type flightFrame struct {
	ts       uint64
	arrival  int64
	lat, lon float64
}

const testICAO = 0x4CA2D1

// flight fabricates an aircraft flying north at 250 m/s from 60°N 30°E, a
// position every half second for n frames, skipping the frames in
// [gapFrom, gapTo) (a stretch the receiver did not hear), stamped by a 12
// MHz counter starting at ts0 (mod 2^48).
func flight(n int, ts0 uint64, gapFrom, gapTo int) []flightFrame {
	var out []flightFrame
	degPerS := 250 / 111_195.0
	for i := 0; i < n; i++ {
		if i >= gapFrom && i < gapTo {
			continue
		}
		sec := float64(i) / 2
		out = append(out, flightFrame{ts: (ts0 + uint64(sec*12e6)) % (1 << 48), lat: 60 + degPerS*sec, lon: 30})
	}
	return out
}

// decodeInto decodes frames as Beast-framed messages of up to per records
// (each message arriving with its newest frame) and applies them; the
// frames are even and odd positions in turn, from an even one.
func decodeInto(t *testing.T, st *fusion.Store, d *msgDecoder, frames []flightFrame, per int) {
	t.Helper()
	decodeIntoFrom(t, st, d, frames, per, 0)
}

// decodeIntoFrom is decodeInto whose first frame is the odd position when
// first is odd.
func decodeIntoFrom(t *testing.T, st *fusion.Store, d *msgDecoder, frames []flightFrame, per, first int) {
	t.Helper()
	for len(frames) > 0 {
		k := min(per, len(frames))
		var body []byte
		for i, f := range frames[:k] {
			sq := sim.ADSBPosition(testICAO, f.lat, f.lon, 35000, (first+i)%2 == 1)
			body = bus.AppendBeast(body, bus.BeastModeSLong, f.ts, 0x80, sq[:])
		}
		d.decodeMessage(bus.FramingBeast, body, Meta{Sensor: "rx1", RecvUnixNano: frames[k-1].arrival}, NewMetrics(nil))
		if len(d.dead) > 0 {
			t.Fatalf("dead letters: %+v", d.dead[0])
		}
		st.ApplyBatch(d.obs)
		frames, first = frames[k:], first+k
	}
}

func aircraft(t *testing.T, st *fusion.Store) fusion.Track {
	t.Helper()
	tr, ok := st.Get("adsb:4CA2D1")
	if !ok {
		t.Fatal("no track")
	}
	return tr
}

// checkFollowed: the track holds every position, none rejected, the last
// one the last frame's, in time order, its time source the receiver.
func checkFollowed(t *testing.T, tr fusion.Track, frames []flightFrame) {
	t.Helper()
	last := frames[len(frames)-1]
	if tr.RejectedPositions != 0 || slicesContain(tr.Warnings, "implausible") {
		t.Errorf("%d positions rejected: %v", tr.RejectedPositions, tr.Warnings)
	}
	if math.Abs(tr.Lat-last.lat) > 1e-4 || math.Abs(tr.Lon-last.lon) > 1e-4 {
		t.Errorf("last position %.5f,%.5f, the last frame's %.5f,%.5f", tr.Lat, tr.Lon, last.lat, last.lon)
	}
	if int(tr.Positions) != len(frames)-1 { // the first frame has no pair yet
		t.Errorf("%d positions from %d frames", tr.Positions, len(frames))
	}
	for i := 1; i < len(tr.History); i++ {
		if tr.History[i].T < tr.History[i-1].T {
			t.Fatalf("history out of time order at %d", i)
		}
	}
	if tr.TimeSource != "receiver" {
		t.Errorf("time_source %q", tr.TimeSource)
	}
}

func slicesContain(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// TestBurstJudgedByReceiverClock: a minute of one aircraft's squitters,
// with a 6-s stretch unheard (1.5 km), arriving within 30 ms (a buffered
// feeder, a reconnect, replay --max): judged by the receiver's 12 MHz
// clock, every position is kept and the last is the last frame's. Judged
// by the arrival, as before issue 30, the 1.5 km "in 0 s" after the gap
// were rejected; the arrival-time case shows it.
func TestBurstJudgedByReceiverClock(t *testing.T) {
	arr := time.Now().UnixNano()
	frames := flight(120, 5_000_000_000, 50, 62)
	for i := range frames {
		frames[i].arrival = arr + int64(i/40)*int64(10*time.Millisecond)
	}
	st := fusion.NewStore(fusion.Config{TTL: time.Hour})
	d := &msgDecoder{dec: &ADSB{}}
	decodeInto(t, st, d, frames, 40)
	tr := aircraft(t, st)
	checkFollowed(t, tr, frames)
	if tr.LastSeen.UnixNano() > arr+30*int64(time.Millisecond) {
		t.Errorf("last seen %v after the last arrival", time.Duration(tr.LastSeen.UnixNano()-arr))
	}

	// A fabricated jump: a pair 50 km further on, stamped 1 s after the
	// last frame by the same receiver, is still refused.
	last := frames[len(frames)-1]
	jump := []flightFrame{
		{ts: last.ts + 12e6, arrival: arr + int64(time.Second), lat: last.lat + 0.45, lon: 30},
		{ts: last.ts + 18e6, arrival: arr + int64(time.Second), lat: last.lat + 0.45, lon: 30},
	}
	decodeInto(t, st, d, jump, 2)
	tr = aircraft(t, st)
	if tr.RejectedPositions == 0 || math.Abs(tr.Lat-last.lat) > 1e-4 {
		t.Errorf("a 50 km jump in 1 s was accepted: %.5f (rejected %d)", tr.Lat, tr.RejectedPositions)
	}

	// Without timestamps (arrival time only), the same burst loses the
	// positions after the gap.
	untimed := append([]flightFrame(nil), frames...)
	for i := range untimed {
		untimed[i].ts = 0
	}
	st = fusion.NewStore(fusion.Config{TTL: time.Hour})
	decodeInto(t, st, &msgDecoder{dec: &ADSB{}}, untimed, 40)
	if tr := aircraft(t, st); tr.RejectedPositions == 0 {
		t.Error("judged by arrival time the burst lost nothing: the test does not test the receiver clock")
	}
}

// followPaced decodes paced frames into a new store and checks the track
// followed them, its last reception at the last arrival (not frozen); it
// returns the decoder, whose clock model the caller checks.
func followPaced(t *testing.T, frames []flightFrame) *msgDecoder {
	t.Helper()
	st := fusion.NewStore(fusion.Config{TTL: time.Hour})
	d := &msgDecoder{dec: &ADSB{}}
	decodeInto(t, st, d, frames, 8)
	tr := aircraft(t, st)
	checkFollowed(t, tr, frames)
	if got := tr.LastSeen.UnixNano() - frames[len(frames)-1].arrival; got > 0 || got < -int64(10*time.Millisecond) {
		t.Errorf("last seen %v from the last arrival: frozen", time.Duration(got))
	}
	return d
}

// TestWrapAndRestartKeepTracking: the 48-bit 12 MHz counter wrapping
// mid-flight, and the receiver restarting (its counter back near zero),
// neither freeze the track nor move it: every position is kept, the last
// is the last frame's, and its time follows the arrivals.
func TestWrapAndRestartKeepTracking(t *testing.T) {
	arr := time.Now().UnixNano() - int64(time.Minute)
	paced := func(frames []flightFrame, from int64) {
		for i := range frames {
			frames[i].arrival = from + int64(float64(i)/2*float64(time.Second)) + int64(3*time.Millisecond)
		}
	}
	t.Run("wrap", func(t *testing.T) {
		frames := flight(120, 1<<48-uint64(20*12e6), -1, -1) // wraps 20 s in
		paced(frames, arr)
		d := followPaced(t, frames)
		if m := d.clocks.Sensor("rx1"); m.Wraps != 1 || m.Resets != 0 {
			t.Errorf("%d wraps, %d resets: the wrap was not followed on one clock", m.Wraps, m.Resets)
		}
	})
	t.Run("restart", func(t *testing.T) {
		frames := flight(120, 7_000_000_000_000, -1, -1)
		paced(frames, arr)
		for i := 60; i < len(frames); i++ { // restarted 30 s in: counter from 1 s
			frames[i].ts = uint64(12e6) + uint64(float64(i-60)/2*12e6)
		}
		d := followPaced(t, frames)
		if d.clocks.Sensor("rx1").Resets != 1 {
			t.Errorf("%d clock resets", d.clocks.Sensor("rx1").Resets)
		}
	})
}

// TestRemoteIDTimestampIsTheFixTime (issue 30): a Remote ID Location's
// timestamp (the UA's GNSS time, tenths of a second after the UTC hour)
// is the observation's time, in the hour nearest its arrival, with
// time_source gps; a message pack heard later keeps its own time.
func TestRemoteIDTimestampIsTheFixTime(t *testing.T) {
	var basic, loc [remoteid.MessageSize]byte
	if err := remoteid.EncodeBasicID(&basic, 2, &remoteid.BasicIDData{IDType: 1, UAType: 2, UASID: []byte("1581F5FKD229400B")}); err != nil {
		t.Fatal(err)
	}
	if err := remoteid.EncodeLocation(&loc, 2, &remoteid.LocationData{Status: 2, Latitude: 52.1, Longitude: 4.2,
		AltitudeGeo: 120, Timestamp: 3599.5}); err != nil { // 59:59.5 after the hour
		t.Fatal(err)
	}
	pack, err := remoteid.AppendPack(nil, 2, basic, loc)
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	arrival := hour.Add(2 * time.Second).UnixNano() // heard 2.5 s before it arrived, across the hour
	d := &msgDecoder{dec: NewRemoteID()}
	d.decodeMessage(bus.FramingRaw, pack, Meta{Sensor: "kit", RecvUnixNano: arrival, Carrier: "message_pack"}, NewMetrics(nil))
	if len(d.obs) == 0 {
		t.Fatalf("no observation (%+v)", d.dead)
	}
	o := d.obs[len(d.obs)-1]
	if want := hour.Add(-500 * time.Millisecond).UnixNano(); o.TimeUnixNano != want || o.TimeSource.String() != "gps" {
		t.Fatalf("time %v (%v), want 18:59:59.5", time.Unix(0, o.TimeUnixNano).UTC(), o.TimeSource)
	}
}

// TestSBSBurstJudgedByItsOwnTimes: the same minute of flight as SBS
// MSG,3 lines (an --sbs-connect feed from readsb or another cuasd),
// stamped with their generated time in a zone two hours east of UTC (the
// format names none), arriving within 30 ms: judged by the lines' own
// times every position is kept, the last is the last line's and the
// track's time source is the receiver; without the times (fields 7–8
// empty) the positions after the 1.5 km gap are refused.
func TestSBSBurstJudgedByItsOwnTimes(t *testing.T) {
	arr := time.Now().UnixNano()
	frames := flight(120, 0, 50, 62)
	zone := time.FixedZone("UTC+2", 2*3600)
	line := func(f flightFrame, timed bool) []byte {
		date, clock := "", ""
		if timed {
			at := time.Unix(0, arr-int64(time.Minute)+int64(f.ts)*1000/12).In(zone)
			date, clock = at.Format("2006/01/02"), at.Format("15:04:05.000")
		}
		return []byte(fmt.Sprintf("MSG,3,1,1,%06X,1,%s,%s,%s,%s,,35000,,,%.5f,%.5f,,,0,0,0,0", testICAO, date, clock, date, clock, f.lat, f.lon))
	}
	run := func(timed bool) fusion.Track {
		st := fusion.NewStore(fusion.Config{TTL: time.Hour})
		d := &msgDecoder{dec: &ADSB{}}
		for i := 0; i < len(frames); i += 40 {
			var body []byte
			for _, f := range frames[i:min(i+40, len(frames))] {
				body = bus.AppendLP(body, line(f, timed))
			}
			d.decodeMessage(bus.FramingLP, body, Meta{Sensor: "sbs1", RecvUnixNano: arr + int64(i/40)*int64(10*time.Millisecond)}, NewMetrics(nil))
			if len(d.dead) > 0 {
				t.Fatalf("dead letters: %+v", d.dead[0])
			}
			st.ApplyBatch(d.obs)
		}
		return aircraft(t, st)
	}
	tr := run(true)
	last := frames[len(frames)-1]
	if tr.RejectedPositions != 0 || int(tr.Positions) != len(frames) {
		t.Errorf("%d of %d positions kept, %d rejected: %v", tr.Positions, len(frames), tr.RejectedPositions, tr.Warnings)
	}
	if math.Abs(tr.Lat-last.lat) > 1e-4 {
		t.Errorf("last position %.5f, the last line's %.5f", tr.Lat, last.lat)
	}
	if tr.TimeSource != "receiver" {
		t.Errorf("time_source %q, want receiver", tr.TimeSource)
	}
	if tr.LastSeen.UnixNano() > arr+30*int64(time.Millisecond) {
		t.Errorf("last seen %v after the last arrival", time.Duration(tr.LastSeen.UnixNano()-arr))
	}
	if tr := run(false); tr.RejectedPositions == 0 {
		t.Error("judged by arrival time the burst lost nothing: the test does not test the lines' times")
	}
}

// TestRestartInsideTheSpanKeepsTracking: the receiver and cuasd started
// together (its counter from 0.1 s) and, a minute later, the receiver
// restarts: its new counter values fall inside the span already seen,
// as a feeder re-sending its last minute would. Paced, the restarted
// clock runs in step with its arrivals, so it is taken as a restart after
// at most ResendEvidence of frames judged re-sent: the track never stops
// following the aircraft for a second or more of arrivals, ends at the
// last frame's position with no position refused, and one clock reset
// is counted.
func TestRestartInsideTheSpanKeepsTracking(t *testing.T) {
	arr := time.Now().UnixNano() - int64(2*time.Minute)
	frames := flight(240, 1_200_000, -1, -1) // 0.1 s on the counter
	for i := range frames {
		frames[i].arrival = arr + int64(float64(i)/2*float64(time.Second)) + int64(3*time.Millisecond)
	}
	for i := 120; i < len(frames); i++ { // restarted a minute in: counter from 0.5 s
		frames[i].ts = uint64(6e6) + uint64(float64(i-120)/2*12e6)
	}
	st := fusion.NewStore(fusion.Config{TTL: time.Hour})
	d := &msgDecoder{dec: &ADSB{}}
	moved, longest := frames[0].arrival, time.Duration(0)
	var lastLat float64
	for i := range frames {
		decodeIntoFrom(t, st, d, frames[i:i+1], 1, i)
		if i == 0 {
			continue
		}
		if tr := aircraft(t, st); tr.Lat != lastLat {
			lastLat, moved = tr.Lat, frames[i].arrival
		}
		longest = max(longest, time.Duration(frames[i].arrival-moved))
	}
	tr := aircraft(t, st)
	last := frames[len(frames)-1]
	if math.Abs(tr.Lat-last.lat) > 1e-4 || tr.RejectedPositions != 0 || slicesContain(tr.Warnings, "implausible") {
		t.Errorf("ends at %.5f (the last frame's %.5f), %d positions refused %v", tr.Lat, last.lat, tr.RejectedPositions, tr.Warnings)
	}
	if longest >= time.Second {
		t.Errorf("the track did not move for %v of arrivals", longest)
	}
	if got := tr.LastSeen.UnixNano() - last.arrival; got > 0 || got < -int64(10*time.Millisecond) {
		t.Errorf("last seen %v from the last arrival: frozen", time.Duration(got))
	}
	m := d.clocks.Sensor("rx1")
	if m.Resets != 1 || m.Resent != m.ResentLive || m.Resent > 1 {
		t.Errorf("%d clock resets, %d frames judged re-sent, %d of them counted live", m.Resets, m.Resent, m.ResentLive)
	}
	t.Logf("restart inside the span: %d frame judged re-sent before the restart was seen; the track stood still for at most %v", m.Resent, longest)
}
