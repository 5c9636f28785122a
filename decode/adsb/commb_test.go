package adsb

import (
	"math"
	"slices"
	"testing"
)

// The Comm-B messages and expected values below are pyModeS's published
// test vectors, junzis/pyModeS @ a49921bb3c8741b2c3e8f925076d714e13aa4c11,
// tests/test_bds_commb.py (line of the decoder test that states the values)
// and tests/test_infer.py. The frames are real DF20/DF21 replies; the
// expected values are pyModeS's, not computed here.

func decodeCommBHex(t *testing.T, h string, known *KnownState, opt CommBOptions) (*Message, *CommB) {
	t.Helper()
	var f [14]byte
	n, err := ParseHex(&f, h)
	if err != nil {
		t.Fatalf("%s: %v", h, err)
	}
	var m Message
	if err := Decode(f[:n], &m); err != nil {
		t.Fatalf("%s: %v", h, err)
	}
	var c CommB
	if !m.CommB(known, opt, &c) {
		t.Fatalf("%s: DF%d is not Comm-B", h, m.DF)
	}
	return &m, &c
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

func wantBDS(t *testing.T, c *CommB, bds BDS, candidates ...BDS) {
	t.Helper()
	if c.BDS != bds {
		t.Errorf("BDS = %q, want %q", c.BDS, bds)
	}
	if got := c.Candidates.Append(nil); !slices.Equal(got, candidates) {
		t.Errorf("candidates = %v, want %v", got, candidates)
	}
}

func TestCommBPyModeSVectors(t *testing.T) {
	t.Run("1,0 line 50", func(t *testing.T) {
		m, c := decodeCommBHex(t, "A800178D10010080F50000D5893C", nil, CommBOptions{})
		wantBDS(t, c, BDS10, BDS10)
		d := c.DataLink
		if m.DF != 21 || !d.ACASOperational || d.SubnetVersion != 0 || !d.SpecificServices || !d.Identification ||
			!d.Squitter || !d.SurveillanceID || !d.CommonUsageGICB || d.ACASHybrid || !d.ACASRA || d.ACASVersion != 1 ||
			d.DTE != 0 || d.OverlayCommand || d.Level5 || d.Continuation || d.UplinkELM != 0 || d.DownlinkELM != 0 {
			t.Errorf("DF%d %+v", m.DF, d)
		}
	})
	t.Run("1,7 line 108", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A0000638FA81C10000000081A92F", nil, CommBOptions{})
		wantBDS(t, c, BDS17, BDS17)
		got := c.GICB.AppendSupported(nil)
		want := []BDS{0x05, 0x06, 0x07, 0x08, 0x09, 0x20, 0x40, 0x50, 0x51, 0x52, 0x60}
		if !slices.Equal(got, want) {
			t.Errorf("supported = %v, want %v", got, want)
		}
	})
	for _, v := range []struct{ line, hex, callsign string }{
		{"181", "A000083E202CC371C31DE0AA1CCF", "KLM1017"},
		{"185", "A0001993202422F2E37CE038738E", "IBK2873"},
		{"189", "A0001838201584F23468207CDFA5", "EXS2MF"},
	} {
		t.Run("2,0 line "+v.line, func(t *testing.T) {
			m, c := decodeCommBHex(t, v.hex, nil, CommBOptions{})
			wantBDS(t, c, BDS20, BDS20)
			if c.Callsign.String() != v.callsign || m.Callsign.String() != v.callsign {
				t.Errorf("callsign %q / message %q, want %q", c.Callsign, m.Callsign, v.callsign)
			}
		})
	}
	t.Run("4,0 line 405", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A000029C85E42F313000007047D3", nil, CommBOptions{})
		wantBDS(t, c, BDS40, BDS40)
		i := c.Intent
		if !i.HasMCPAltitude || i.MCPAltitude != 3008 || !i.HasFMSAltitude || i.FMSAltitude != 3008 || !i.HasBaroSetting {
			t.Errorf("%+v", i)
		}
		near(t, "baro setting", i.BaroSetting, 1020.0, 1e-9)
	})
	t.Run("4,4 line 516", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A0001692185BD5CF400000DFC696", nil, CommBOptions{Meteo: true})
		if !c.Candidates.Has(BDS44) {
			t.Fatalf("4,4 not a candidate: %v", c.Candidates.Append(nil))
		}
		w := c.Meteo
		if !w.HasWind || w.WindSpeed != 22 || w.FigureOfMerit != 1 || w.HasPressure || w.HasHumidity {
			t.Errorf("%+v", w)
		}
		near(t, "wind direction", w.WindDirection, 344.5, 0.5)
		near(t, "temperature", w.Temperature, -48.75, 0.1)
		// pyModeS (test_infer.py line 55) hides 4,4 unless asked.
		_, c = decodeCommBHex(t, "A0001692185BD5CF400000DFC696", nil, CommBOptions{})
		if c.Candidates.Has(BDS44) {
			t.Error("4,4 inferred without the meteo option")
		}
	})
	t.Run("4,5 line 820", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A00004190001FB80000000000000", nil, CommBOptions{Meteo: true})
		if !c.Candidates.Has(BDS45) {
			t.Fatalf("4,5 not a candidate: %v", c.Candidates.Append(nil))
		}
		h := c.Hazard
		if !h.HasTemperature || h.HasTurbulence || h.HasWindShear || h.HasMicroburst || h.HasIcing ||
			h.HasWakeVortex || h.HasPressure || h.HasRadioHeight {
			t.Errorf("%+v", h)
		}
		near(t, "temperature", h.Temperature, -4.5, 0.1)
	})
	t.Run("5,0 line 649", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A000139381951536E024D4CCF6B5", nil, CommBOptions{})
		if c.BDS != BDS50 {
			t.Errorf("BDS = %v (candidates %v), want 5,0", c.BDS, c.Candidates.Append(nil))
		}
		v := c.TrackTurn
		near(t, "roll", v.Roll, 2.1, 0.1)
		near(t, "true track", v.Track, 114.258, 0.01)
		near(t, "groundspeed", v.Groundspeed, 438, 0)
		near(t, "track rate", v.TrackRate, 0.125, 0.01)
		near(t, "TAS", v.TAS, 424, 0)
	})
	t.Run("5,0 line 658", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A0001691FFD263377FFCE02B2BF9", nil, CommBOptions{})
		if !c.Candidates.Has(BDS50) {
			t.Fatalf("5,0 not a candidate: %v", c.Candidates.Append(nil))
		}
		near(t, "roll", c.TrackTurn.Roll, -0.35, 0.05)
	})
	t.Run("6,0 line 735", func(t *testing.T) {
		_, c := decodeCommBHex(t, "A00004128F39F91A7E27C46ADC21", nil, CommBOptions{})
		if c.BDS != BDS60 {
			t.Errorf("BDS = %v (candidates %v), want 6,0", c.BDS, c.Candidates.Append(nil))
		}
		v := c.HeadingSpeed
		near(t, "magnetic heading", v.Heading, 42.715, 0.01)
		near(t, "IAS", v.IAS, 252, 0)
		near(t, "Mach", v.Mach, 0.42, 0.005)
		if v.BaroRate != -1920 || v.InertialRate != -1920 {
			t.Errorf("vertical rates %d, %d, want -1920, -1920", v.BaroRate, v.InertialRate)
		}
	})
}

// TestCommBPyModeSSynthetic covers pyModeS's constructed payloads
// (tests/test_bds_commb.py, line given) for the fields the real frames
// leave empty.
func TestCommBPyModeSSynthetic(t *testing.T) {
	var c CommB
	t.Run("3,0 minimal line 235", func(t *testing.T) {
		DecodeCommB(0x30_80_00_00_00_00_00, nil, CommBOptions{}, &c)
		wantBDS(t, &c, BDS30, BDS30)
		if !c.RA.Active || c.RA.Corrective || c.RA.ThreatType != 0 {
			t.Errorf("%+v", c.RA)
		}
	})
	t.Run("3,0 ICAO threat line 255", func(t *testing.T) {
		DecodeCommB(0x30_80_00_00_00_00_00|1<<(55-29)|0xABCDEF<<2, nil, CommBOptions{}, &c)
		if c.RA.ThreatType != 1 || c.RA.ThreatAddress != 0xABCDEF {
			t.Errorf("%+v", c.RA)
		}
	})
	t.Run("3,0 range bearing line 268", func(t *testing.T) {
		DecodeCommB(0x30_80_00_00_00_00_00|2<<(55-29)|10<<(55-49)|3, nil, CommBOptions{}, &c)
		r := c.RA
		if r.ThreatType != 2 || !r.HasThreatRange || !r.HasThreatBearing || r.ThreatBearing != 15 || r.HasThreatAltitude {
			t.Errorf("%+v", r)
		}
		near(t, "range", r.ThreatRange, 0.9, 1e-9)
	})
	t.Run("3,0 rejects TTI 3 line 217", func(t *testing.T) {
		DecodeCommB(0x30_80_00_00_00_00_00|3<<(55-29), nil, CommBOptions{}, &c)
		if c.Candidates.Has(BDS30) {
			t.Error("TTI 3 accepted")
		}
	})
	t.Run("3,0 flags line 287", func(t *testing.T) {
		DecodeCommB(0x30<<48|1<<(55-8)|1<<(55-9)|1<<(55-12)|1<<(55-23)|1<<(55-27), nil, CommBOptions{}, &c)
		r := c.RA
		if !r.Active || !r.Corrective || !r.SenseReversal || !r.NoAbove || !r.MultipleThreat || r.Downward || r.NoBelow || r.Terminated {
			t.Errorf("%+v", r)
		}
	})
	t.Run("6,0 Mach 1 accepted, above rejected lines 721-728", func(t *testing.T) {
		DecodeCommB(1<<(55-23)|250<<(55-33), nil, CommBOptions{}, &c)
		if !c.Candidates.Has(BDS60) {
			t.Error("Mach 1.0 rejected")
		}
		DecodeCommB(1<<(55-23)|251<<(55-33), nil, CommBOptions{}, &c)
		if c.Candidates.Has(BDS60) {
			t.Error("Mach 1.004 accepted")
		}
	})
	t.Run("5,0 roll -40 rejected line 607", func(t *testing.T) {
		DecodeCommB(1<<55|(1<<9|284)<<(55-10), nil, CommBOptions{}, &c)
		if c.Candidates.Has(BDS50) {
			t.Error("roll -40° accepted")
		}
	})
	t.Run("zero payload", func(t *testing.T) {
		DecodeCommB(0, nil, CommBOptions{Meteo: true}, &c)
		if c.BDS != 0 || c.Candidates != 0 {
			t.Errorf("zero payload inferred as %v", c.Candidates.Append(nil))
		}
	})
}

// TestCommBAmbiguity is pyModeS's phase-3 case (tests/test_infer.py lines
// 94-130): a payload that is valid as 5,0 and as 6,0, separated by the
// known state.
func TestCommBAmbiguity(t *testing.T) {
	const mb = 0xFFBAA11E200472
	var c CommB
	DecodeCommB(mb, nil, CommBOptions{}, &c)
	wantBDS(t, &c, BDS50, BDS50, BDS60)
	if !c.Ambiguous {
		t.Error("not ambiguous without a known state")
	}
	// pyModeS's decoded values of both readings (test_infer.py lines 90-91).
	near(t, "5,0 groundspeed", c.TrackTurn.Groundspeed, 240, 0)
	near(t, "6,0 IAS", c.HeadingSpeed.IAS, 336, 0)

	DecodeCommB(mb, &KnownState{HasGroundspeed: true, Groundspeed: 240}, CommBOptions{}, &c)
	if c.BDS != BDS50 || c.Ambiguous {
		t.Errorf("known ground speed 240 kt: BDS %v ambiguous %v, want 5,0 decided", c.BDS, c.Ambiguous)
	}
	// Beyond pyModeS: a known track far from the 5,0 track (239°) and a
	// ground speed far from its 240 kt rule 5,0 out; 6,0's heading (359°)
	// fits the track.
	DecodeCommB(mb, &KnownState{HasTrack: true, Track: 355}, CommBOptions{}, &c)
	if c.BDS != BDS60 || c.Ambiguous || !c.Rejected.Has(BDS50) {
		t.Errorf("known track 355°: BDS %v ambiguous %v rejected %v, want 6,0", c.BDS, c.Ambiguous, c.Rejected.Append(nil))
	}
	// An altitude alone compares nothing pyModeS scores; here it checks
	// 6,0's IAS (336 kt) against its Mach (0.48): at FL350 336 kt IAS is
	// Mach 0.9, so 6,0 is rejected.
	DecodeCommB(mb, &KnownState{HasAltitude: true, Altitude: 35000}, CommBOptions{}, &c)
	if c.BDS != BDS50 || !c.Rejected.Has(BDS60) {
		t.Errorf("known altitude 35000 ft: BDS %v rejected %v, want 5,0 with 6,0 rejected", c.BDS, c.Rejected.Append(nil))
	}
}

func TestAtmosphere(t *testing.T) {
	// ISA tables: at FL350 (238.4 hPa, -54.3 °C, 576.4 kt speed of sound)
	// Mach 0.80 is 272 kt CAS.
	near(t, "Mach of 272 kt CAS at FL350", casToMach(272, 35000), 0.80, 0.005)
	near(t, "pressure FL350", isaPressure(35000), 23842, 30)
	near(t, "speed of sound FL350", speedOfSound(35000), 576.4, 0.5)
	near(t, "ISA temperature FL350", isaTemperature(35000), -54.3, 0.2)
	near(t, "Mach of 100 kt CAS at sea level", casToMach(100, 0), 100/661.4786, 0.001)
}

func TestBDSString(t *testing.T) {
	for b, want := range map[BDS]string{BDS10: "1,0", BDS17: "1,7", 0x5F: "5,F", 0: ""} {
		if got := b.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint8(b), got, want)
		}
	}
}

// TestCommBPyModeS2 are pyModeS 2's inference tests (junzis/pyModeS @
// b80161e3fac56047023f5692da29313d2cf66f8a, the last v2 tree,
// tests/test_bds_inference.py): bds.infer on a
// 4,0 reply (line 21) and bds.is50or60 with a reference ground speed,
// track and altitude (lines 27-29).
func TestCommBPyModeS2(t *testing.T) {
	_, c := decodeCommBHex(t, "A0001839CA3800315800007448D9", nil, CommBOptions{})
	if c.BDS != BDS40 || c.Ambiguous {
		t.Errorf("4,0: BDS %v ambiguous %v candidates %v", c.BDS, c.Ambiguous, c.Candidates.Append(nil))
	}
	_, c = decodeCommBHex(t, "A0001838201584F23468207CDFA5", nil, CommBOptions{})
	if c.Candidates.Has(BDS50) || c.Candidates.Has(BDS60) {
		t.Errorf("2,0 reply is 5,0 or 6,0: %v", c.Candidates.Append(nil))
	}
	ref := &KnownState{HasGroundspeed: true, Groundspeed: 320, HasTrack: true, Track: 250, HasAltitude: true, Altitude: 14000}
	for _, h := range []string{"A8001EBCFFFB23286004A73F6A5B", "A8001EBCFE1B29287FDCA807BCFC"} {
		t.Run(h, func(t *testing.T) {
			_, c = decodeCommBHex(t, h, ref, CommBOptions{})
			if c.BDS != BDS50 || c.Ambiguous {
				t.Errorf("%s: BDS %v ambiguous %v candidates %v rejected %v", h, c.BDS, c.Ambiguous,
					c.Candidates.Append(nil), c.Rejected.Append(nil))
			}
		})
	}
}

func TestBDSIndexMatchesTable(t *testing.T) {
	for i, r := range commBRegisters {
		if bdsIndex(r) != i {
			t.Errorf("%v: index %d, table position %d", r, bdsIndex(r), i)
		}
	}
	if bdsIndex(0x05) != -1 {
		t.Error("0,5 has an index")
	}
}
