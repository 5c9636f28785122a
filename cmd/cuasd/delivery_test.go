package main

import (
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/testshared"
)

// TestDeliveryModesEqual (issue 30's "Done when": a burst, a reconnect or
// `replay --max` gives the same tracks, history and SBS lines as the same
// data paced in real time). The real Beast capture goes through the real
// inputs of a running cuasd serve four ways: paced on its own 12 MHz clock
// (at pacedSpeed times its speed), in one burst to --beast-listen, with
// the connection dropped near the end and a new one re-sending thousands
// of records before the rest, and by `cuasd replay --max --capture-time`
// over NATS; and paced to three receivers at once (three named Beast
// inputs hearing the same transmissions, as a multilateration network's
// do). Against the paced run, every other must give every aircraft the
// same final position and altitude, none flagged implausible, the same
// history points in the same order, and the same SBS lines for each
// aircraft in the same order: with three receivers, SBS writes every
// receiver's copy of a message, as readsb does (docs/READSB.md), so each
// line three times, while a track, its history and every output fed
// fixes take each transmission once (before, history held each position
// three times and tracks were flagged: TestEveryReceiversCopyIsOneFix in
// fusion).
func TestDeliveryModesEqual(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: feeds cuasd the 61 s capture four ways, once paced (-short)")
	}
	file := testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin")
	capture, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const pacedSpeed = 4
	offs := recordOffsets(capture)
	cut, resend := len(offs)-1_000, 6_000
	const receivers = 3
	modes := []struct {
		name    string
		deliver func(t *testing.T, in servedInputs)
		// listens are the --beast-listen flags (nil: one, unnamed), and
		// copies how many receivers hear each frame.
		listens []string
		copies  int
	}{
		{fmt.Sprintf("paced x%d", pacedSpeed), func(t *testing.T, in servedInputs) {
			c := dialRetry(t, in.beasts[0])
			defer c.Close()
			feedPacedAt(t, capture, pacedSpeed, []net.Conn{c})
		}, nil, 1},
		{"burst", func(t *testing.T, in servedInputs) {
			c := dialRetry(t, in.beasts[0])
			defer c.Close()
			if _, err := c.Write(capture); err != nil {
				t.Fatal(err)
			}
		}, nil, 1},
		{"reconnect", func(t *testing.T, in servedInputs) {
			for _, p := range [][]byte{capture[:offs[cut]], capture[offs[cut-resend]:]} {
				c := dialRetry(t, in.beasts[0])
				if _, err := c.Write(p); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
		}, nil, 1},
		{"replay --max", func(t *testing.T, in servedInputs) {
			if err := run(t.Context(), []string{"replay", file, "--format", "beast", "--nats-url", in.natsURL, "--max", "--capture-time"},
				func(string) string { return "" }, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
		}, nil, 1},
		{fmt.Sprintf("%d receivers paced x%d", receivers, pacedSpeed), func(t *testing.T, in servedInputs) {
			var conns []net.Conn
			for _, a := range in.beasts {
				c := dialRetry(t, a)
				defer c.Close()
				conns = append(conns, c)
			}
			feedPacedAt(t, capture, pacedSpeed, conns)
		}, []string{"127.0.0.1:0?sensor=rx1", "127.0.0.1:0?sensor=rx2", "127.0.0.1:0?sensor=rx3"}, receivers},
		{fmt.Sprintf("%d receivers, one burst each at once", receivers), func(t *testing.T, in servedInputs) {
			var conns []net.Conn
			for _, a := range in.beasts {
				c := dialRetry(t, a)
				defer c.Close()
				conns = append(conns, c)
			}
			var wg sync.WaitGroup
			for _, c := range conns {
				wg.Go(func() {
					if _, err := c.Write(capture); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}, []string{"127.0.0.1:0?sensor=rx1", "127.0.0.1:0?sensor=rx2", "127.0.0.1:0?sensor=rx3"}, receivers},
	}
	want := modeSFrames(capture) + modeSFrames(capture[offs[cut-resend]:offs[cut]])
	var ref deliveryResult
	for i, m := range modes {
		listens := m.listens
		if listens == nil {
			listens = []string{"127.0.0.1:0"}
		}
		got := deliveryRun(t, capture, listens, func(in servedInputs) {
			m.deliver(t, in)
			n := modeSFrames(capture) * m.copies
			if m.name == "reconnect" {
				n = want
			}
			waitFramesAccounted(t, in.metrics, n)
		})
		points, span := 0, time.Duration(0)
		for _, icao := range slices.Sorted(maps.Keys(got.tracks)) {
			tr := got.tracks[icao]
			points += len(tr.history)
			if n := len(tr.times); n > 0 {
				span = max(span, tr.times[n-1].Sub(tr.times[0]))
			}
			for _, w := range tr.warnings {
				if strings.Contains(w, "implausible") {
					t.Errorf("%s: %s flagged: %s", m.name, icao, w)
				}
			}
			for j := 1; j < len(tr.times); j++ {
				if !tr.times[j].After(tr.times[j-1]) {
					t.Errorf("%s: %s: history point %d is not after point %d", m.name, icao, j, j-1)
					break
				}
			}
		}
		t.Logf("%s: %d tracks, %d history points (the longest history spans %s), %d SBS lines; %d exact duplicates and %d re-sent frames dropped, %d clock resets",
			m.name, len(got.tracks), points, span.Round(time.Millisecond), len(got.sbs), got.duplicates, got.resent, got.resets)
		if got.resets != 0 {
			t.Errorf("%s: %d clock resets counted", m.name, got.resets)
		}
		if i == 0 {
			ref = got
			continue
		}
		compareDelivery(t, m.name, ref, got, m.copies)
	}
}

// compareDelivery reports where a delivery mode's tracks, histories and
// SBS lines differ from the paced run's, whose SBS lines each receiver of
// copies wrote once.
func compareDelivery(t *testing.T, mode string, ref, got deliveryResult, copies int) {
	t.Helper()
	for _, icao := range slices.Sorted(maps.Keys(ref.tracks)) {
		r, g := ref.tracks[icao], got.tracks[icao]
		if !equalPoints([][2]float64{r.pos}, [][2]float64{g.pos}) {
			t.Errorf("%s: %s ends at %.6f,%.6f, paced at %.6f,%.6f", mode, icao, g.pos[0], g.pos[1], r.pos[0], r.pos[1])
		}
		if (r.altM == nil) != (g.altM == nil) || r.altM != nil && *r.altM != *g.altM {
			t.Errorf("%s: %s altitude %v, paced %v", mode, icao, deref(g.altM), deref(r.altM))
		}
		if !equalPoints(r.history, g.history) {
			t.Errorf("%s: %s history of %d points, paced %d (or not the same positions in order)", mode, icao, len(g.history), len(r.history))
		}
	}
	rs, gs := sbsByAircraft(ref.sbs), sbsByAircraft(got.sbs)
	if copies > 1 {
		compareCopies(t, mode, rs, gs, copies)
		return
	}
	for _, hex := range slices.Sorted(maps.Keys(rs)) {
		if !slices.Equal(rs[hex], gs[hex]) {
			i := 0
			for i < min(len(rs[hex]), len(gs[hex])) && rs[hex][i] == gs[hex][i] {
				i++
			}
			t.Errorf("%s: SBS %s: %d lines, paced %d; first difference at line %d:\n %s\n paced:\n %s", mode, hex, len(gs[hex]), len(rs[hex]), i,
				at(gs[hex], i), at(rs[hex], i))
		}
	}
	for hex := range gs {
		if _, ok := rs[hex]; !ok {
			t.Errorf("%s: SBS lines for %s, none paced", mode, hex)
		}
	}
}

// compareCopies reports an aircraft whose SBS lines from copies receivers
// are not copies times the paced run's of each message type, or whose
// MSG,3 positions are not each the paced run's copies times. The lines
// themselves may differ: a line carries what the aircraft's messages said
// so far (its callsign, squawk), and which receiver's copy of a message
// came first decides whether an earlier line had it yet. So may the count
// of the Mode S replies' lines (MSG,5–8) by a few: a reply's address
// comes from its parity, so it is written only for an aircraft a
// squitter announced, and another receiver's copy of a reply heard before
// the first squitter may arrive after one receiver's copy of it. And a
// receiver's first position messages of an aircraft, which paced have no
// position yet (no pair, no earlier position), may have one: when
// another receiver's feed came first, they are decoded against its
// position. There must be as many such lines as lines without a position
// are missing, and each must carry a position the paced run wrote or one
// within 1 km of one (the aircraft's position a frame before its first
// paced one).
func compareCopies(t *testing.T, mode string, rs, gs map[string][]string, copies int) {
	t.Helper()
	key := func(l string) string {
		f := strings.Split(l, ",")
		if len(f) != 22 {
			return l
		}
		if f[1] == "3" {
			return "MSG,3 at " + f[14] + "," + f[15]
		}
		return "MSG," + f[1]
	}
	const noPosition = "MSG,3 at ,"
	for _, hex := range slices.Sorted(maps.Keys(rs)) {
		want := map[string]int{}
		for _, l := range rs[hex] {
			want[key(l)] += copies
		}
		paced := maps.Clone(want)
		for _, l := range gs[hex] {
			want[key(l)]--
		}
		gained := 0 // MSG,3 lines with a position paced without one
		for k, n := range want {
			if reply := k >= "MSG,5" && k <= "MSG,8"; n != 0 && !(reply && n < 0 && n >= -2*(copies-1)) &&
				!(k == noPosition && n > 0) && !(strings.HasPrefix(k, "MSG,3 at ") && n < 0 && nearPaced(k, paced)) {
				t.Errorf("%s: SBS %s: %d lines, paced %d (%d receivers); %q %d times too few", mode, hex, len(gs[hex]), len(rs[hex]), copies, k, n)
				break
			}
			if k != noPosition && strings.HasPrefix(k, "MSG,3 at ") && n < 0 {
				gained -= n // lines beyond copies times paced's
			}
		}
		if gained != want[noPosition] {
			t.Errorf("%s: SBS %s: %d MSG,3 lines have a position that paced had none, but %d paced without one have none here", mode, hex, gained, want[noPosition])
		}
	}
}

func at(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return "(none)"
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// sbsByAircraft are the MSG lines of each aircraft (field 5), in the
// order written, with the dates and times (fields 7-10) blanked: the
// logged ones (9-10) are when cuasd wrote the line, and the generated ones
// (7-8), the message's receiver time mapped to UTC, can never be after
// the frame arrived, so they follow the delivery (docs/design/time.md,
// "What depends on the delivery").
func sbsByAircraft(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		f := strings.Split(l, ",")
		if len(f) != 22 {
			out[""] = append(out[""], l)
			continue
		}
		f[6], f[7], f[8], f[9] = "", "", "", ""
		out[f[4]] = append(out[f[4]], strings.Join(f, ","))
	}
	return out
}

// nearPaced reports whether MSG,3 key k ("MSG,3 at lat,lon") is a position
// of paced's or within 1 km of one.
func nearPaced(k string, paced map[string]int) bool {
	if paced[k] > 0 {
		return true
	}
	lat, lon, ok := msg3Position(k)
	for pk := range paced {
		if plat, plon, pok := msg3Position(pk); ok && pok && gate.Distance(gate.Point{Lat: lat, Lon: lon}, gate.Point{Lat: plat, Lon: plon}) <= 1000 {
			return true
		}
	}
	return false
}

// msg3Position is the position of a compareCopies MSG,3 key.
func msg3Position(k string) (lat, lon float64, ok bool) {
	la, lo, found := strings.Cut(strings.TrimPrefix(k, "MSG,3 at "), ",")
	lat, err1 := strconv.ParseFloat(la, 64)
	lon, err2 := strconv.ParseFloat(lo, 64)
	return lat, lon, found && err1 == nil && err2 == nil
}
