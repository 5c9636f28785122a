package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

// TestBeastBurstAgainstDump1090 (issue 30): the real Beast capture pushed
// to --beast-listen in one burst — what a buffered feeder, a receiver
// reconnecting or a fast replay delivers — against Debian's
// dump1090-mutability fed the same capture at its own pace (as a live
// receiver; dump1090 judges by arrival, so a burst is not its case). The
// capture holds every Mode S record twice (same timestamp, same bytes):
// cuasd gets them all and must drop the copies (counted); dump1090, which
// would write a line for each, gets each record once.
// Judged by the receiver's clock: every aircraft ends at the last
// position the capture holds (decoded here in receiver-time order), no
// track is flagged implausible, every aircraft's history holds ≥ 95 % of
// the distinct positions dump1090 sent, in time order, and the SBS feed
// writes ≥ 95 % of dump1090's lines, for the same aircraft, with its
// MSG,3 positions to 4 decimals.
func TestBeastBurstAgainstDump1090(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: feeds dump1090 the 61 s capture in real time (-short)")
	}
	capture, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	dBI, dSBS, _ := startDump1090(t, t.TempDir())
	cSBS := freeAddr(t)
	base, lines, stop := startServeLines(t, "--beast-listen", "127.0.0.1:0", "--track-ttl", "10m", "--sbs-listen", cSBS, "--readsb-drones=false")
	defer stop()
	var cBI string
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter beast="); ok {
			cBI = a
		}
	}
	dS, cS := dialRetry(t, dSBS), dialRetry(t, cSBS)
	defer dS.Close()
	defer cS.Close()
	dCol, cCol := collectConn(dS), collectConn(cS)
	time.Sleep(500 * time.Millisecond) // the servers register a client just after accepting it
	c := dialRetry(t, cBI)
	if _, err := c.Write(capture); err != nil { // one burst
		t.Fatal(err)
	}
	defer c.Close()
	d := dialRetry(t, dBI)
	defer d.Close()
	feedPaced(t, withoutDuplicates(capture), []net.Conn{d})
	time.Sleep(2 * time.Second) // dump1090's last SBS lines

	dLines, cLines := msgLines(dCol.bytes()), msgLines(cCol.bytes())
	dPos := sbsPositions(dLines)
	last := lastPositions(capture)
	covered, total := checkBurstTracks(t, base, last, dPos)
	checkSBSPerMessage(t, dLines, cLines)
	// The capture's exact duplicates were dropped once each, and counted.
	u, _ := url.Parse(base)
	_, metrics := get(t, u.Scheme+"://"+u.Host+"/metrics")
	if want := fmt.Sprintf(`cuasd_frames_duplicate_total{protocol="adsb"} %d`, captureDuplicates(capture)); !strings.Contains(string(metrics), want) {
		i := strings.Index(string(metrics), "cuasd_frames_duplicate_total{")
		t.Errorf("/metrics lacks %s: %.80s", want, metrics[max(i, 0):])
	}
	t.Logf("burst: %d aircraft; history holds %d of dump1090's %d distinct positions (%.1f %%)", len(last), covered, total, 100*float64(covered)/float64(max(total, 1)))
}

// checkBurstTracks checks every aircraft's live position, warnings and
// history; it returns how many of dump1090's distinct positions the
// histories hold, of how many.
func checkBurstTracks(t *testing.T, base string, last map[string][2]float64, dPos map[string][][2]float64) (covered, total int) {
	t.Helper()
	icaos := make([]string, 0, len(last))
	for icao := range last {
		icaos = append(icaos, icao)
	}
	sort.Strings(icaos)
	for _, icao := range icaos {
		h := waitHistoryAt(t, base, "adsb:"+icao, last[icao])
		var tr struct {
			Lat, Lon   float64
			Warnings   []string `json:"warnings"`
			TimeSource string   `json:"time_source"`
		}
		_, body := get(t, base+"/v1/tracks/adsb:"+icao)
		if err := json.Unmarshal(body, &tr); err != nil {
			t.Fatal(err)
		}
		if w := last[icao]; math.Abs(tr.Lat-w[0]) > 1e-5 || math.Abs(tr.Lon-w[1]) > 1e-5 {
			t.Errorf("%s ends at %.5f,%.5f; the capture's last position is %.5f,%.5f", icao, tr.Lat, tr.Lon, w[0], w[1])
		}
		for _, w := range tr.Warnings {
			if strings.Contains(w, "implausible") {
				t.Errorf("%s flagged: %s", icao, w)
			}
		}
		if tr.TimeSource != "receiver" {
			t.Errorf("%s time_source %q", icao, tr.TimeSource)
		}
		for i := 1; i < len(h.Points); i++ {
			if !h.Points[i].Time.After(h.Points[i-1].Time) {
				t.Errorf("%s: history point %d is not after point %d", icao, i, i-1)
				break
			}
		}
		oracle := dedupe(dPos[icao])
		n := 0
		for _, o := range oracle {
			for _, p := range h.Points {
				if math.Max(math.Abs(o[0]-p.Lat), math.Abs(o[1]-p.Lon)) <= 1e-5 {
					n++
					break
				}
			}
		}
		t.Logf("%s: history %d points, holds %d of dump1090's %d distinct positions", icao, len(h.Points), n, len(oracle))
		if float64(n) < 0.95*float64(len(oracle)) {
			t.Errorf("%s: history holds %d of dump1090's %d distinct positions, want ≥ 95 %%", icao, n, len(oracle))
		}
		covered, total = covered+n, total+len(oracle)
	}
	return covered, total
}

// waitHistoryAt waits until a track is at want (the capture's last
// position: the feed may still be decoding when the frames are all
// delivered) and its history ends there, and returns the history.
func waitHistoryAt(t *testing.T, base, id string, want [2]float64) historyJ {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h := waitHistoryAtTrack(t, base, id)
		p := h.Points[len(h.Points)-1]
		if math.Abs(p.Lat-want[0]) <= 1e-5 && math.Abs(p.Lon-want[1]) <= 1e-5 {
			return h
		}
		if time.Now().After(deadline) {
			return h // the caller reports where it ended
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sbsLine is one MSG line: its type, address and position (when it has
// one).
type sbsLine struct {
	typ, hex string
	pos      [2]float64
	hasPos   bool
}

func msgLines(b []byte) []sbsLine {
	var out []sbsLine
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimRight(l, "\r"), ",")
		if len(f) != 22 || f[0] != "MSG" {
			continue
		}
		s := sbsLine{typ: f[1], hex: f[4]}
		lat, e1 := strconv.ParseFloat(f[14], 64)
		lon, e2 := strconv.ParseFloat(f[15], 64)
		if e1 == nil && e2 == nil {
			s.pos, s.hasPos = [2]float64{lat, lon}, true
		}
		out = append(out, s)
	}
	return out
}

// sbsPositions are the MSG,3 positions of each aircraft, in order.
func sbsPositions(lines []sbsLine) map[string][][2]float64 {
	out := map[string][][2]float64{}
	for _, l := range lines {
		if l.typ == "3" && l.hasPos {
			out[l.hex] = append(out[l.hex], l.pos)
		}
	}
	return out
}

// checkSBSPerMessage compares the per-message SBS feed with dump1090's:
// ≥ 95 % of its lines, the same aircraft, and its MSG,3 positions (to 4
// decimals) among cuasd's.
func checkSBSPerMessage(t *testing.T, d, c []sbsLine) {
	t.Helper()
	count := func(ls []sbsLine) (map[string]int, map[string]bool, map[string]bool) {
		types, ac, pos := map[string]int{}, map[string]bool{}, map[string]bool{}
		for _, l := range ls {
			types[l.typ]++
			ac[l.hex] = true
			if l.typ == "3" && l.hasPos {
				pos[fmt.Sprintf("%s %.4f %.4f", l.hex, l.pos[0], l.pos[1])] = true
			}
		}
		return types, ac, pos
	}
	dt, da, dp := count(d)
	ct, ca, cp := count(c)
	t.Logf("SBS lines by type: dump1090 %v (%d), cuasd %v (%d)", dt, len(d), ct, len(c))
	if float64(len(c)) < 0.95*float64(len(d)) {
		t.Errorf("SBS: cuasd wrote %d lines, dump1090 %d: want ≥ 95 %%", len(c), len(d))
	}
	for hex := range da {
		if !ca[hex] {
			t.Errorf("SBS: dump1090 wrote lines for %s, cuasd none", hex)
		}
	}
	for hex := range ca {
		if !da[hex] {
			t.Errorf("SBS: cuasd wrote lines for %s, dump1090 none", hex)
		}
	}
	n := 0
	for k := range dp {
		if cp[k] {
			n++
		}
	}
	t.Logf("SBS: %d of dump1090's %d distinct MSG,3 positions are cuasd's to 4 decimals (cuasd %d)", n, len(dp), len(cp))
	if float64(n) < 0.95*float64(len(dp)) {
		t.Errorf("SBS: %d of dump1090's %d MSG,3 positions among cuasd's, want ≥ 95 %%", n, len(dp))
	}
}

// lastPositions decodes the capture's airborne positions in receiver-time
// order (the 12 MHz timestamps; a stable sort keeps the capture's order
// for equal ones) and returns each aircraft's last: globally from an
// even/odd pair at most 10 s apart, else locally from the last position
// at most 60 s old.
func lastPositions(capture []byte) map[string][2]float64 {
	type rec struct {
		ts    uint64
		frame []byte
	}
	var recs []rec
	for f, err := range adsb.BeastFrames(capture) {
		if err == nil && f.Type != adsb.BeastModeAC {
			recs = append(recs, rec{f.Timestamp, append([]byte(nil), f.Bytes()...)})
		}
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].ts < recs[j].ts })
	type state struct {
		half   [2]adsb.CPR
		halfTS [2]uint64
		has    [2]bool
		pos    [2]float64
		posTS  uint64
		hasPos bool
	}
	ac := map[uint32]*state{}
	var m adsb.Message
	for _, r := range recs {
		if adsb.DecodeWith(r.frame, &m, adsb.Options{}) != nil || m.CRC != adsb.CRCValid || !m.HasCPR || m.Kind != adsb.KindAirbornePosition || !m.AddressType.IsICAO() {
			continue
		}
		s := ac[m.Address]
		if s == nil {
			s = &state{}
			ac[m.Address] = s
		}
		k := 0
		if m.CPR.Odd {
			k = 1
		}
		s.half[k], s.halfTS[k], s.has[k] = m.CPR, r.ts, true
		var lat, lon float64
		var err error = fmt.Errorf("none")
		if s.has[0] && s.has[1] && absDiff(s.halfTS[0], s.halfTS[1]) <= 10*12_000_000 {
			lat, lon, err = adsb.CPRGlobalAirborne(s.half[0], s.half[1], m.CPR.Odd)
		}
		if err != nil && s.hasPos && r.ts-s.posTS <= 60*12_000_000 {
			lat, lon, err = adsb.CPRLocalAirborne(m.CPR, s.pos[0], s.pos[1])
		}
		if err == nil {
			s.pos, s.posTS, s.hasPos = [2]float64{lat, lon}, r.ts, true
		}
	}
	out := map[string][2]float64{}
	for a, s := range ac {
		if s.hasPos {
			out[fmt.Sprintf("%06X", a)] = s.pos
		}
	}
	return out
}

// withoutDuplicates is the capture without the Mode S records that repeat
// an earlier one's timestamp and bytes.
func withoutDuplicates(capture []byte) []byte {
	var out []byte
	var f adsb.BeastFrame
	seen := map[string]bool{}
	for off := 0; off < len(capture); {
		n, err := adsb.ParseBeast(capture[off:], &f)
		if err == adsb.ErrIncomplete {
			break
		}
		k := strconv.FormatUint(f.Timestamp, 16) + string(f.Bytes())
		if err != nil || f.Type == adsb.BeastModeAC || !seen[k] {
			out = append(out, capture[off:off+n]...)
		}
		if err == nil && f.Type != adsb.BeastModeAC {
			seen[k] = true
		}
		off += n
	}
	return out
}

// captureDuplicates counts the Mode S records that repeat an earlier one's
// timestamp and bytes.
func captureDuplicates(capture []byte) int {
	seen, n := map[string]bool{}, 0
	for f, err := range adsb.BeastFrames(capture) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		k := strconv.FormatUint(f.Timestamp, 16) + string(f.Bytes())
		if seen[k] {
			n++
		}
		seen[k] = true
	}
	return n
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestReplayMaxEqualsPaced (issue 30): `cuasd replay --max --capture-time`
// of the real capture gives every aircraft the same history — the same
// positions in the same order, none implausible — as a paced replay (at
// twice the capture's speed, to keep the test short: a paced replay is
// judged by the same receiver clock at any speed). Before issue 30 the
// fast replay lost positions as implausible jumps.
func TestReplayMaxEqualsPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: replays a 61 s capture at twice its speed (-short)")
	}
	file := testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin")
	capture, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	last := lastPositions(capture)
	histories := func(args ...string) map[string][][2]float64 {
		base, natsURL, stop := startServeNATS(t)
		defer stop()
		if err := run(t.Context(), append([]string{"replay", file, "--format", "beast", "--nats-url", natsURL, "--sensor", "rx"}, args...),
			func(string) string { return "" }, io.Discard, io.Discard); err != nil {
			t.Fatalf("replay %v: %v", args, err)
		}
		out := map[string][][2]float64{}
		for icao := range last {
			h := waitHistoryAt(t, base, "adsb:"+icao, last[icao])
			for _, p := range h.Points {
				out[icao] = append(out[icao], [2]float64{p.Lat, p.Lon})
			}
		}
		return out
	}
	fast := histories("--max", "--capture-time")
	paced := histories("--speed", "2")
	n := 0
	for icao := range last {
		f, p := fast[icao], paced[icao]
		n += len(f)
		if len(f) != len(p) {
			t.Errorf("%s: replay --max %d history points, paced %d", icao, len(f), len(p))
			continue
		}
		for i := range f {
			if f[i] != p[i] {
				t.Errorf("%s: point %d at %v with --max, %v paced", icao, i, f[i], p[i])
				break
			}
		}
	}
	t.Logf("replay --max and paced: %d aircraft, %d history points", len(last), n)
}
