package adsb

import (
	"math"
	"strconv"
	"testing"
)

// adsbState is what the squitters of one aircraft said last, the yardstick
// for its Comm-B replies.
type adsbState struct {
	known    KnownState
	vrate    int32
	hasVRate bool
	callsign Callsign
	selAlt   int32
	hasSel   bool
}

// commBTally counts what the Comm-B replies of a capture decoded to.
type commBTally struct {
	replies, unknownAddress, none, decided, ambiguous, rejected int
	// zeroMB counts replies whose MB field is all zeros (an empty
	// register); coldAmbiguous those ambiguous without the ADS-B state.
	zeroMB, coldAmbiguous int
	byBDS                 map[BDS]int
	// Agreements with the same aircraft's ADS-B: checked / agreeing.
	gsChecked, gsAgree, trkChecked, trkAgree, hdgChecked, hdgAgree int
	vrChecked, vrAgree, csChecked, csAgree, selChecked, selAgree   int
}

func (s *adsbState) update(m *Message) {
	if m.HasAltitude && !m.AltitudeGNSS {
		s.known.HasAltitude, s.known.Altitude = true, m.Altitude
	}
	if m.Kind == KindAirborneVelocity && m.HasGroundspeed && m.HasTrack {
		s.known.HasGroundspeed, s.known.Groundspeed = true, m.Groundspeed
		s.known.HasTrack, s.known.Track = true, m.Track
		if m.HasVerticalRate {
			s.hasVRate, s.vrate = true, m.VerticalRate
		}
	}
	if m.Kind == KindIdentification {
		s.callsign = m.Callsign
	}
	if m.Kind == KindTargetState && m.HasSelectedAltitude && !m.SelectedAltitudeFMS {
		s.hasSel, s.selAlt = true, m.SelectedAltitude
	}
}

// check compares a decided reply with the aircraft's ADS-B. The limits
// are far tighter than the rejection limits of DecodeCommB, so a wrong
// register that slipped through shows here.
func (tl *commBTally) check(c *CommB, s *adsbState) {
	k := &s.known
	count := func(checked, agree *int, ok bool) {
		*checked++
		if ok {
			*agree++
		}
	}
	switch c.BDS {
	case BDS50:
		if t := &c.TrackTurn; t.HasGroundspeed && k.HasGroundspeed {
			count(&tl.gsChecked, &tl.gsAgree, math.Abs(t.Groundspeed-k.Groundspeed) <= 10)
		}
		if t := &c.TrackTurn; t.HasTrack && k.HasTrack {
			count(&tl.trkChecked, &tl.trkAgree, angleDiff(t.Track, k.Track) <= 5)
		}
	case BDS60:
		h := &c.HeadingSpeed
		if h.HasHeading && k.HasTrack {
			count(&tl.hdgChecked, &tl.hdgAgree, angleDiff(h.Heading, k.Track) <= 30)
		}
		if h.HasBaroRate && s.hasVRate {
			count(&tl.vrChecked, &tl.vrAgree, math.Abs(float64(h.BaroRate-s.vrate)) <= 500)
		}
	case BDS20:
		if s.callsign != (Callsign{}) {
			count(&tl.csChecked, &tl.csAgree, c.Callsign == s.callsign)
		}
	case BDS40:
		if c.Intent.HasMCPAltitude && s.hasSel {
			// 4,0 is in 16 ft steps, the target state in 32 ft steps.
			count(&tl.selChecked, &tl.selAgree, abs32(c.Intent.MCPAltitude-s.selAlt) <= 32)
		}
	}
}

// TestCommBCapture decodes every DF20/DF21 reply of the real Beast capture
// the way the pipeline does: a reply's address comes from its parity, so
// it is only taken for an aircraft already heard in a CRC-checked DF17 or
// DF11, and its registers are checked against that aircraft's ADS-B state.
// Then each decided register is compared with the same aircraft's ADS-B.
func TestCommBCapture(t *testing.T) {
	raw := readShared(t, "beastblackbox_ulss7_2018-04-03.beast.bin")
	states := map[uint32]*adsbState{}
	tl := commBTally{byBDS: map[BDS]int{}}
	var m Message
	var c CommB
	for f, err := range BeastFrames(raw) {
		if err != nil || f.Type == BeastModeAC || Decode(f.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.CRC == CRCValid && (m.DF == 17 || m.DF == 11):
			s := states[m.Address]
			if s == nil {
				s = &adsbState{}
				states[m.Address] = s
			}
			s.update(&m)
			continue
		case m.DF != 20 && m.DF != 21:
			continue
		}
		tl.replies++
		s := states[m.Address]
		if s == nil {
			tl.unknownAddress++
			continue
		}
		m.CommB(nil, CommBOptions{Meteo: true}, &c)
		if c.Ambiguous {
			tl.coldAmbiguous++
		}
		if c.MB == 0 {
			tl.zeroMB++
		}
		m.CommB(&s.known, CommBOptions{Meteo: true}, &c)
		tl.tally(&c)
		if c.BDS != 0 && !c.Ambiguous {
			tl.check(&c, s)
		}
	}
	t.Logf("%d DF20/21 replies: %d from addresses not heard in DF17/DF11 (not decoded), %d no register (%d of them all-zero MB), %d decided, %d ambiguous (%d without the ADS-B state), %d with a register rejected by the ADS-B state; by register %v",
		tl.replies, tl.unknownAddress, tl.none, tl.zeroMB, tl.decided, tl.ambiguous, tl.coldAmbiguous, tl.rejected, tl.byBDS)
	t.Logf("agreement with ADS-B: 5,0 ground speed %d/%d (≤10 kt), track %d/%d (≤5°); 6,0 heading %d/%d (≤30° of track), baro rate %d/%d (≤500 ft/min); 2,0 callsign %d/%d; 4,0 MCP altitude %d/%d",
		tl.gsAgree, tl.gsChecked, tl.trkAgree, tl.trkChecked, tl.hdgAgree, tl.hdgChecked, tl.vrAgree, tl.vrChecked, tl.csAgree, tl.csChecked, tl.selAgree, tl.selChecked)
	tl.assert(t)
}

func (tl *commBTally) tally(c *CommB) {
	switch {
	case c.BDS == 0:
		tl.none++
	case c.Ambiguous:
		tl.ambiguous++
	default:
		tl.decided++
		tl.byBDS[c.BDS]++
	}
	if c.Rejected != 0 {
		tl.rejected++
	}
}

func (tl *commBTally) assert(t *testing.T) {
	if tl.replies == 0 || tl.decided == 0 {
		t.Fatalf("%d replies, %d decided: the capture has DF20/21 replies", tl.replies, tl.decided)
	}
	for _, a := range []struct {
		what           string
		agree, checked int
	}{
		{"5,0 ground speed", tl.gsAgree, tl.gsChecked}, {"5,0 track", tl.trkAgree, tl.trkChecked},
		{"6,0 heading", tl.hdgAgree, tl.hdgChecked}, {"6,0 baro rate", tl.vrAgree, tl.vrChecked},
		{"2,0 callsign", tl.csAgree, tl.csChecked}, {"4,0 MCP altitude", tl.selAgree, tl.selChecked},
	} {
		// 95%: the ADS-B state is up to a few seconds older than the
		// reply, so a turn or a level-off can make a true reading differ.
		if a.checked > 0 && a.agree*100 < a.checked*95 {
			t.Errorf("%s agrees with ADS-B in %d of %d replies", a.what, a.agree, a.checked)
		}
	}
}

// sampleTrack is the previous decided 5,0 ground speed and 6,0 heading of
// one aircraft of pyModeS's samples.
type sampleTrack struct {
	gsT, hdgT int64
	gs, hdg   float64
}

// step compares a decided 5,0 or 6,0 reading with the aircraft's previous
// one, if at most a minute old; it returns the number of comparisons made
// and of jumps found.
func (l *sampleTrack) step(c *CommB, ts int64) (steps, jumps int) {
	cmp := func(prevT *int64, prev *float64, v, limit float64, angle bool) {
		if ts-*prevT <= 60 {
			d := math.Abs(v - *prev)
			if angle {
				d = angleDiff(v, *prev)
			}
			steps++
			if d > limit {
				jumps++
			}
		}
		*prevT, *prev = ts, v
	}
	switch {
	case c.BDS == BDS50 && c.TrackTurn.HasGroundspeed:
		cmp(&l.gsT, &l.gs, c.TrackTurn.Groundspeed, 40, false)
	case c.BDS == BDS60 && c.HeadingSpeed.HasHeading:
		cmp(&l.hdgT, &l.hdg, c.HeadingSpeed.Heading, 45, true)
	}
	return steps, jumps
}

// TestCommBPyModeSSamples reads pyModeS's 10,000 sample DF20/DF21 replies
// (../shared/data/adsb, timestamp, ICAO, frame). They come without ADS-B,
// so the check is each aircraft's own consistency: consecutive decided 5,0
// ground speeds and 6,0 headings of one aircraft, at most a minute apart,
// must not jump (≤ 40 kt, ≤ 45°), which readings of a wrong register would.
func TestCommBPyModeSSamples(t *testing.T) {
	var m Message
	var c CommB
	for _, name := range []string{"pymodes_sample_data_commb_df20.csv", "pymodes_sample_data_commb_df21.csv"} {
		t.Run(name, func(t *testing.T) {
			seen := map[string]*sampleTrack{}
			tl := commBTally{byBDS: map[BDS]int{}}
			steps, jumps := 0, 0
			for _, r := range readCSV(t, name) {
				ts, _ := strconv.ParseInt(r[0], 10, 64)
				if Decode(mustFrame(t, r[2]), &m) != nil {
					continue
				}
				tl.replies++
				m.CommB(nil, CommBOptions{}, &c)
				tl.tally(&c)
				if c.BDS == 0 || c.Ambiguous {
					continue
				}
				l := seen[r[1]]
				if l == nil {
					l = &sampleTrack{gsT: -1e9, hdgT: -1e9}
					seen[r[1]] = l
				}
				s, j := l.step(&c, ts)
				steps, jumps = steps+s, jumps+j
			}
			t.Logf("%s: %d replies, %d no register, %d decided, %d ambiguous (no ADS-B state to separate them); by register %v; %d jumps in %d consecutive 5,0/6,0 readings",
				name, tl.replies, tl.none, tl.decided, tl.ambiguous, tl.byBDS, jumps, steps)
			if tl.decided == 0 || steps == 0 || jumps*100 > steps*5 {
				t.Errorf("%s: %d decided, %d jumps in %d steps", name, tl.decided, jumps, steps)
			}
		})
	}
}
