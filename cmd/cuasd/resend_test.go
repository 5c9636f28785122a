package main

import (
	"encoding/json"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

// TestReconnectResendEqualsOnce (issue 30's "a reconnect gives the same
// tracks, history and SBS lines"): the real Beast capture sent to
// --beast-listen, the connection dropped after most of it and a new one
// re-sending the last resendRecords records before the rest — what a
// feeder or relay re-sending its buffer on reconnect delivers, far more
// than the exact-duplicate cache remembers. Every aircraft must end where
// it ends when the capture is sent once, with the same history (the same
// positions in the same order), none flagged implausible; the per-message
// SBS feed writes as many lines; no clock reset is counted, and the
// re-sent frames the cache forgot are counted as re-sent. Once with the
// capture's own 12 MHz timestamps, once with them turned into a GPS
// receiver's (?clock=gps: UTC times of day, the capture ending seconds
// before it is sent), which has no clock epoch to restart.
func TestReconnectResendEqualsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: runs cuasd four times over the 61 s capture (-short)")
	}
	capture, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("12mhz", func(t *testing.T) { checkResend(t, capture, capture, "127.0.0.1:0") })
	t.Run("gps", func(t *testing.T) {
		checkResend(t, capture, gpsStamped(t, capture, time.Now().Add(-70*time.Second)), "127.0.0.1:0?clock=gps")
	})
}

// checkResend runs TestReconnectResendEqualsOnce over sent, the capture
// with its timestamps as the receiver on listen (a --beast-listen value)
// stamps them.
func checkResend(t *testing.T, capture, sent []byte, listen string) {
	offs := recordOffsets(sent)
	const resendRecords = 11_000
	cut := len(offs) - 1_000 // the connection drops 1,000 records before the end
	if cut-resendRecords < 0 {
		t.Fatalf("the capture has %d records; the test re-sends %d before record %d", len(offs), resendRecords, cut)
	}
	once := resendRun(t, capture, listen, [][]byte{sent})
	resent := sent[offs[cut-resendRecords]:offs[cut]]
	again := resendRun(t, capture, listen, [][]byte{sent[:offs[cut]], sent[offs[cut-resendRecords]:]})
	t.Logf("re-sent %d records (%d Mode S frames, %d of them distinct) after %d of %d; %d frames dropped as re-sent, %d as exact duplicates",
		resendRecords, modeSFrames(resent), modeSFrames(resent)-captureDuplicates(resent), cut, len(offs), again.resent, again.duplicates)

	if again.resets != 0 {
		t.Errorf("the re-send counted %d clock resets", again.resets)
	}
	if len(again.sbs) != len(once.sbs) {
		t.Errorf("SBS: %d lines with the re-send, %d sent once", len(again.sbs), len(once.sbs))
	}
	if again.resent+again.duplicates != once.duplicates+uint64(modeSFrames(resent)) {
		t.Errorf("%d frames dropped as re-sent and %d as duplicates; sent once %d duplicates, and %d Mode S frames were re-sent",
			again.resent, again.duplicates, once.duplicates, modeSFrames(resent))
	}
	for _, icao := range slices.Sorted(maps.Keys(once.tracks)) {
		o, a := once.tracks[icao], again.tracks[icao]
		if math.Abs(o.pos[0]-a.pos[0]) > 1e-6 || math.Abs(o.pos[1]-a.pos[1]) > 1e-6 {
			t.Errorf("%s ends at %.5f,%.5f with the re-send, at %.5f,%.5f sent once", icao, a.pos[0], a.pos[1], o.pos[0], o.pos[1])
		}
		for _, w := range a.warnings {
			if strings.Contains(w, "implausible") {
				t.Errorf("%s flagged with the re-send: %s", icao, w)
			}
		}
		if !equalPoints(o.history, a.history) {
			t.Errorf("%s: history of %d points with the re-send, %d sent once (or not the same positions in order)", icao, len(a.history), len(o.history))
		}
	}
}

// deliveryResult is what a cuasd fed the capture one way ends with: each
// aircraft's track and history, the MSG lines an --sbs-listen client
// read, and the sensor clock's counts.
type deliveryResult struct {
	tracks                     map[string]deliveredTrack
	sbs                        []string
	resets, resent, duplicates uint64
}

// deliveredTrack is one aircraft's live track (/v1/tracks/ID) and history.
type deliveredTrack struct {
	pos      [2]float64
	altM     *float64
	warnings []string
	history  [][2]float64
	times    []time.Time
}

// servedInputs are the inputs of a running cuasd serve and its metrics.
type servedInputs struct {
	natsURL, metrics string
	// beasts are every Beast input's address, in the order of the
	// --beast-listen flags.
	beasts []string
}

// resendRun starts cuasd with --beast-listen listen and sends each part
// of the capture on its own connection to it, waiting until every Mode S
// frame of a part is accounted for, decoded, rejected or dropped, before
// the next connection.
func resendRun(t *testing.T, capture []byte, listen string, parts [][]byte) deliveryResult {
	t.Helper()
	return deliveryRun(t, capture, []string{listen}, func(in servedInputs) {
		want := 0
		for _, p := range parts {
			c := dialRetry(t, in.beasts[0])
			if _, err := c.Write(p); err != nil {
				t.Fatal(err)
			}
			c.Close() // the connection drops
			want += modeSFrames(p)
			waitFramesAccounted(t, in.metrics, want)
		}
	})
}

// deliveryRun starts cuasd serve with a Beast input for each of listens
// (--beast-listen values), NATS and an SBS client, has deliver feed it the capture and
// wait until every Mode S frame delivered is accounted for, and returns
// the tracks, histories, SBS lines and counts of the capture's aircraft
// (lastPositions).
func deliveryRun(t *testing.T, capture []byte, listens []string, deliver func(servedInputs)) deliveryResult {
	t.Helper()
	cSBS := freeAddr(t)
	args := []string{"--nats-listen", "127.0.0.1:0", "--track-ttl", "10m", "--sbs-listen", cSBS, "--readsb-drones=false"}
	for _, l := range listens {
		args = append(args, "--beast-listen", l)
	}
	base, lines, stop := startServeLines(t, args...)
	defer stop()
	var in servedInputs
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter beast="); ok {
			in.beasts = append(in.beasts, a)
		}
		if u, ok := strings.CutPrefix(l, "cuasd nats "); ok {
			in.natsURL = u
		}
	}
	s := dialRetry(t, cSBS)
	defer s.Close()
	col := collectConn(s)
	time.Sleep(500 * time.Millisecond) // the SBS server registers its client just after accepting it
	u, _ := url.Parse(base)
	in.metrics = u.Scheme + "://" + u.Host + "/metrics"
	deliver(in)
	out := deliveryResult{tracks: map[string]deliveredTrack{}}
	for icao, pos := range lastPositions(capture) {
		h := waitHistoryAt(t, base, "adsb:"+icao, pos)
		var tr struct {
			Lat, Lon float64
			AltM     *float64 `json:"alt_m"`
			Warnings []string `json:"warnings"`
		}
		_, body := get(t, base+"/v1/tracks/adsb:"+icao)
		if err := json.Unmarshal(body, &tr); err != nil {
			t.Fatal(err)
		}
		dt := deliveredTrack{pos: [2]float64{tr.Lat, tr.Lon}, altM: tr.AltM, warnings: tr.Warnings}
		for _, p := range h.Points {
			dt.history = append(dt.history, [2]float64{p.Lat, p.Lon})
			dt.times = append(dt.times, p.Time)
		}
		out.tracks[icao] = dt
	}
	out.sbs = stableLines(col)
	_, m := get(t, in.metrics)
	out.resets = uint64(metricSum(m, "cuasd_sensor_clock_resets_total"))
	out.resent = uint64(metricSum(m, "cuasd_frames_resent_total"))
	out.duplicates = uint64(metricSum(m, "cuasd_frames_duplicate_total"))
	return out
}

// waitFramesAccounted waits until the ADS-B decoder has decoded, rejected
// or dropped (as a duplicate or re-sent) want frames.
func waitFramesAccounted(t *testing.T, metricsURL string, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var got uint64
	for time.Now().Before(deadline) {
		_, m := get(t, metricsURL)
		got = 0
		for _, name := range []string{"cuasd_frames_decoded_total", "cuasd_frames_rejected_total", "cuasd_frames_duplicate_total", "cuasd_frames_resent_total"} {
			got += uint64(metricSum(m, name))
		}
		if got >= uint64(want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the decoder accounted for %d of %d frames", got, want)
}

// stableLines are the MSG lines collected once no more arrive for a
// second.
func stableLines(col *collector) []string {
	n := -1
	for {
		var got []string
		for _, l := range strings.Split(string(col.bytes()), "\n") {
			if l = strings.TrimRight(l, "\r"); strings.HasPrefix(l, "MSG,") {
				got = append(got, l)
			}
		}
		if len(got) == n {
			return got
		}
		n = len(got)
		time.Sleep(time.Second)
	}
}

// recordOffsets are the offsets of the capture's Beast records.
func recordOffsets(capture []byte) []int {
	var offs []int
	var f adsb.BeastFrame
	for off := 0; off < len(capture); {
		n, err := adsb.ParseBeast(capture[off:], &f)
		if err == adsb.ErrIncomplete {
			break
		}
		offs = append(offs, off)
		off += n
	}
	return offs
}

// modeSFrames counts the Mode S records of a piece of Beast stream.
func modeSFrames(b []byte) int {
	n := 0
	for f, err := range adsb.BeastFrames(b) {
		if err == nil && f.Type != adsb.BeastModeAC {
			n++
		}
	}
	return n
}

func equalPoints(a, b [][2]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i][0]-b[i][0]) > 1e-6 || math.Abs(a[i][1]-b[i][1]) > 1e-6 {
			return false
		}
	}
	return true
}

// gpsStamped is capture with each record's 12 MHz timestamp turned into
// the Radarcape-style GPS time a receiver would have stamped, the first
// record heard at start: the same intervals, as UTC times of day.
func gpsStamped(t *testing.T, capture []byte, start time.Time) []byte {
	t.Helper()
	var out []byte
	var ts0 uint64
	for f, err := range adsb.BeastFrames(capture) {
		if err != nil {
			t.Fatal(err)
		}
		if ts0 == 0 {
			ts0 = f.Timestamp
		}
		if f.Timestamp != 0 {
			f.Timestamp = gpsTimestamp(start.UnixNano() + (int64(f.Timestamp)-int64(ts0))*1000/12)
		}
		out = adsb.AppendBeast(out, &f)
	}
	return out
}
