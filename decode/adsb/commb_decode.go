package adsb

import "math"

// DecodeCommB infers which register the 56-bit MB field of a Comm-B reply
// holds, decodes every candidate register into c, and checks the
// candidates against what is known about the aircraft (known may be nil).
// It overwrites all of c and allocates nothing.
//
// Inference follows pyModeS: a payload of zeros is no register; a
// self-identifying register (1,0, 1,7, 2,0, 3,0) is tried first, then
// every heuristic register (4,0, 5,0, 6,0, and 4,4 and 4,5 with
// opt.Meteo). The known state then rejects candidates whose values
// contradict it (see [CommB.Rejected]) and ranks the rest as pyModeS's
// phase 3 does, so that c.BDS is the best guess and c.Ambiguous says
// whether it is only a guess.
func DecodeCommB(mb uint64, known *KnownState, opt CommBOptions, c *CommB) {
	*c = CommB{MB: mb}
	mb &= 1<<56 - 1
	cand := inferCommB(mb, opt.Meteo)
	c.decodeRegisters(mb, cand)
	var k KnownState
	if known != nil {
		k = *known
	}
	c.Candidates = cand
	for _, r := range [...]BDS{BDS40, BDS44, BDS45, BDS50, BDS60} {
		if cand.Has(r) && !c.plausible(r, &k) {
			c.Candidates.remove(r)
			c.Rejected.add(r)
		}
	}
	c.choose(&k)
}

// CommB decodes the MB field of a DF20 or DF21 message m with
// [DecodeCommB]. The altitude a DF20 reply carries was measured with the
// reply, so it replaces any altitude in known. It reports false, leaving c
// empty, for other downlink formats.
func (m *Message) CommB(known *KnownState, opt CommBOptions, c *CommB) bool {
	if m.DF != 20 && m.DF != 21 {
		*c = CommB{}
		return false
	}
	var k KnownState
	if known != nil {
		k = *known
	}
	if m.DF == 20 && m.HasAltitude {
		k.HasAltitude, k.Altitude = true, m.Altitude
	}
	DecodeCommB(meOf(&m.Frame), &k, opt, c)
	return true
}

func (c *CommB) decodeRegisters(mb uint64, cand BDSSet) {
	if cand.Has(BDS10) {
		c.DataLink = decodeBDS10(mb)
	}
	if cand.Has(BDS17) {
		c.GICB = GICBCapability(mb >> 32)
	}
	if cand.Has(BDS20) {
		for i := range 8 {
			c.Callsign[i] = callsignChars[(mb>>(42-6*i))&0x3F]
		}
	}
	if cand.Has(BDS30) {
		c.RA = decodeBDS30(mb)
	}
	if cand.Has(BDS40) {
		c.Intent = decodeBDS40(mb)
	}
	if cand.Has(BDS44) {
		c.Meteo = decodeBDS44(mb)
	}
	if cand.Has(BDS45) {
		c.Hazard = decodeBDS45(mb)
	}
	if cand.Has(BDS50) {
		c.TrackTurn = decodeBDS50(mb)
	}
	if cand.Has(BDS60) {
		c.HeadingSpeed = decodeBDS60(mb)
	}
}

func decodeBDS10(mb uint64) DataLinkCapability {
	return DataLinkCapability{
		Continuation: bit(mb, 9), OverlayCommand: bit(mb, 15), ACASOperational: bit(mb, 16),
		SubnetVersion: uint8(bits(mb, 17, 23)), Level5: bit(mb, 24), SpecificServices: bit(mb, 25),
		UplinkELM: uint8(bits(mb, 26, 28)), DownlinkELM: uint8(bits(mb, 29, 32)),
		Identification: bit(mb, 33), Squitter: bit(mb, 34), SurveillanceID: bit(mb, 35),
		CommonUsageGICB: bit(mb, 36), ACASHybrid: bit(mb, 37), ACASRA: bit(mb, 38),
		ACASVersion: uint8(bits(mb, 39, 40)), DTE: uint16(bits(mb, 41, 56)),
	}
}

func decodeBDS30(mb uint64) ResolutionAdvisory {
	r := ResolutionAdvisory{
		Active: bit(mb, 9), Corrective: bit(mb, 10), Downward: bit(mb, 11), IncreasedRate: bit(mb, 12),
		SenseReversal: bit(mb, 13), AltitudeCrossing: bit(mb, 14), Positive: bit(mb, 15),
		NoBelow: bit(mb, 23), NoAbove: bit(mb, 24), NoLeft: bit(mb, 25), NoRight: bit(mb, 26),
		Terminated: bit(mb, 27), MultipleThreat: bit(mb, 28), ThreatType: uint8(bits(mb, 29, 30)),
	}
	switch r.ThreatType {
	case 1:
		r.ThreatAddress = bits(mb, 31, 54)
	case 2:
		r.ThreatAltitude, r.HasThreatAltitude = decodeAC13(bits(mb, 31, 43))
		// Range: n-1 tenths of a NM; bearing: 6° sectors, centre reported;
		// 0 means "no estimate" for both.
		if n := bits(mb, 44, 50); n > 0 {
			r.HasThreatRange, r.ThreatRange = true, float64(n-1)/10
		}
		if n := bits(mb, 51, 56); n > 0 {
			r.HasThreatBearing, r.ThreatBearing = true, float64(6*(n-1)+3)
		}
	}
	return r
}

func decodeBDS40(mb uint64) VerticalIntention {
	var v VerticalIntention
	if bit(mb, 1) {
		v.HasMCPAltitude, v.MCPAltitude = true, int32(bits(mb, 2, 13))*16
	}
	if bit(mb, 14) {
		v.HasFMSAltitude, v.FMSAltitude = true, int32(bits(mb, 15, 26))*16
	}
	if bit(mb, 27) {
		// 0.1 hPa steps from 800 hPa; rounded to the step so that 1020.0
		// is not printed as 1019.9999999.
		v.HasBaroSetting, v.BaroSetting = true, float64(bits(mb, 28, 39)+8000)/10
	}
	if bit(mb, 48) {
		v.HasModes, v.VNAV, v.AltitudeHold, v.Approach = true, bit(mb, 49), bit(mb, 50), bit(mb, 51)
	}
	if bit(mb, 54) {
		v.HasTargetSource, v.TargetSource = true, uint8(bits(mb, 55, 56))
	}
	return v
}

func decodeBDS44(mb uint64) MeteoRoutine {
	v := MeteoRoutine{FigureOfMerit: uint8(bits(mb, 1, 4)), Temperature: float64(signedBits(mb, 24, 34)) * 0.25}
	if bit(mb, 5) {
		v.HasWind, v.WindSpeed, v.WindDirection = true, float64(bits(mb, 6, 14)), float64(bits(mb, 15, 23))*180/256
	}
	if bit(mb, 35) {
		v.HasPressure, v.Pressure = true, float64(bits(mb, 36, 46))
	}
	if bit(mb, 47) {
		v.HasTurbulence, v.Turbulence = true, uint8(bits(mb, 48, 49))
	}
	if bit(mb, 50) {
		v.HasHumidity, v.Humidity = true, float64(bits(mb, 51, 56))*100/64
	}
	return v
}

func decodeBDS45(mb uint64) MeteoHazard {
	var v MeteoHazard
	level := func(s uint) (bool, uint8) { return bit(mb, s), uint8(bits(mb, s+1, s+2)) }
	v.HasTurbulence, v.Turbulence = level(1)
	v.HasWindShear, v.WindShear = level(4)
	v.HasMicroburst, v.Microburst = level(7)
	v.HasIcing, v.Icing = level(10)
	v.HasWakeVortex, v.WakeVortex = level(13)
	if bit(mb, 16) {
		v.HasTemperature, v.Temperature = true, float64(signedBits(mb, 17, 26))*0.25
	}
	if bit(mb, 27) {
		v.HasPressure, v.Pressure = true, float64(bits(mb, 28, 38))
	}
	if bit(mb, 39) {
		v.HasRadioHeight, v.RadioHeight = true, int32(bits(mb, 40, 51))*16
	}
	return v
}

func decodeBDS50(mb uint64) TrackTurn {
	var v TrackTurn
	if bit(mb, 1) {
		v.HasRoll, v.Roll = true, float64(signedBits(mb, 2, 11))*45/256
	}
	if bit(mb, 12) {
		v.HasTrack, v.Track = true, wrap360(float64(signedBits(mb, 13, 23))*90/512)
	}
	if bit(mb, 24) {
		v.HasGroundspeed, v.Groundspeed = true, float64(bits(mb, 25, 34)*2)
	}
	if bit(mb, 35) {
		v.HasTrackRate, v.TrackRate = true, float64(signedBits(mb, 36, 45))*8/256
	}
	if bit(mb, 46) {
		v.HasTAS, v.TAS = true, float64(bits(mb, 47, 56)*2)
	}
	return v
}

func decodeBDS60(mb uint64) HeadingSpeed {
	var v HeadingSpeed
	if bit(mb, 1) {
		v.HasHeading, v.Heading = true, wrap360(float64(signedBits(mb, 2, 12))*90/512)
	}
	if bit(mb, 13) {
		v.HasIAS, v.IAS = true, float64(bits(mb, 14, 23))
	}
	if bit(mb, 24) {
		v.HasMach, v.Mach = true, float64(bits(mb, 25, 34))*2.048/512
	}
	if bit(mb, 35) {
		v.HasBaroRate, v.BaroRate = true, signedBits(mb, 36, 45)*32
	}
	if bit(mb, 46) {
		v.HasInertialRate, v.InertialRate = true, signedBits(mb, 47, 56)*32
	}
	return v
}

// Plausibility limits against the known state. They are deliberately
// wide: the known state may be seconds old, magnetic heading differs from
// true track by the declination and the wind drift, and airspeed differs
// from ground speed by the wind (jet streams reach 200 kt).
const (
	maxGroundspeedDiff = 100.0 // kt, 5,0 ground speed vs ADS-B
	maxTrackDiff       = 60.0  // °, 5,0 true track vs ADS-B track
	maxHeadingDiff     = 90.0  // °, 6,0 magnetic heading vs ADS-B true track
	maxWind            = 250.0 // kt, TAS (5,0, or from 6,0 Mach/IAS) vs ground speed
	maxMachDiff        = 0.1   // 6,0 Mach vs the Mach its IAS gives at the altitude
	maxISADeviation    = 40.0  // °C, 4,4/4,5 temperature vs the standard atmosphere
)

// plausible checks one heuristic candidate against the known state.
func (c *CommB) plausible(r BDS, k *KnownState) bool {
	switch r {
	case BDS50:
		return c.score50(k) >= 0
	case BDS60:
		return c.score60(k) >= 0
	case BDS44:
		return !k.HasAltitude || math.Abs(c.Meteo.Temperature-isaTemperature(k.Altitude)) <= maxISADeviation
	case BDS45:
		h := &c.Hazard
		return !k.HasAltitude || !h.HasTemperature || math.Abs(h.Temperature-isaTemperature(k.Altitude)) <= maxISADeviation
	}
	return true
}

// score50 measures a 5,0 reading against the known state as pyModeS's
// phase 3 does (differences over 50 kt and 30°, summed): -1 when a value
// contradicts the state, +Inf when nothing could be compared.
func (c *CommB) score50(k *KnownState) float64 {
	t := &c.TrackTurn
	score, n := 0.0, 0
	if t.HasGroundspeed && k.HasGroundspeed {
		d := math.Abs(t.Groundspeed - k.Groundspeed)
		if d > maxGroundspeedDiff {
			return -1
		}
		score, n = score+d/50, n+1
	}
	if t.HasTrack && k.HasTrack {
		d := angleDiff(t.Track, k.Track)
		if d > maxTrackDiff {
			return -1
		}
		score, n = score+d/30, n+1
	}
	if t.HasTAS && k.HasGroundspeed && math.Abs(t.TAS-k.Groundspeed) > maxWind {
		return -1
	}
	if n == 0 {
		return math.Inf(1)
	}
	return score
}

// score60 measures a 6,0 reading: heading against track (over 30°), and
// the true airspeed its Mach (or IAS) gives at the known altitude against
// the ground speed (over 100 kt); Mach and IAS must agree at that altitude.
func (c *CommB) score60(k *KnownState) float64 {
	h := &c.HeadingSpeed
	score, n := 0.0, 0
	if h.HasHeading && k.HasTrack {
		d := angleDiff(h.Heading, k.Track)
		if d > maxHeadingDiff {
			return -1
		}
		score, n = score+d/30, n+1
	}
	if k.HasAltitude {
		mach, ok := h.Mach, h.HasMach
		if h.HasIAS {
			m := casToMach(h.IAS, k.Altitude)
			if ok && math.Abs(m-mach) > maxMachDiff {
				return -1
			}
			mach, ok = m, true
		}
		if ok && k.HasGroundspeed {
			d := math.Abs(mach*speedOfSound(k.Altitude) - k.Groundspeed)
			if d > maxWind {
				return -1
			}
			score, n = score+d/100, n+1
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	return score
}

// choose sets BDS and Ambiguous from the candidates.
func (c *CommB) choose(k *KnownState) {
	var list [len(commBRegisters)]BDS
	cands := c.Candidates.Append(list[:0])
	if len(cands) == 0 {
		return
	}
	c.BDS = cands[0]
	if len(cands) == 1 || bdsIndex(cands[0]) < bdsIndex(BDS40) {
		// One candidate, or a register that names itself: the heuristic
		// matches beside it are coincidences of its bits.
		c.Ambiguous = len(cands) > 1 && !c.selfIdentified()
		return
	}
	best, bestScore, second := BDS(0), math.Inf(1), math.Inf(1)
	for _, r := range cands {
		s := math.Inf(1)
		switch r {
		case BDS50:
			s = c.score50(k)
		case BDS60:
			s = c.score60(k)
		}
		switch {
		case s < bestScore:
			best, bestScore, second = r, s, bestScore
		case s < second:
			second = s
		}
	}
	// A candidate wins when it matched the state within one scale unit
	// (50 kt, 30°, 100 kt) and every other one matched it worse by at
	// least one more (or could not be compared).
	if best != 0 && bestScore <= 1 && second-bestScore >= 1 {
		c.BDS = best
		return
	}
	c.Ambiguous = true
}

// selfIdentified reports whether the best candidate carries its own
// register number, which the heuristic registers cannot share (their first
// bits would be a status bit of 0 followed by non-zero values).
func (c *CommB) selfIdentified() bool {
	return c.BDS == BDS10 || c.BDS == BDS20 || c.BDS == BDS30
}

func angleDiff(a, b float64) float64 {
	d := math.Abs(wrap360(a - b))
	return math.Min(d, 360-d)
}

// The standard atmosphere (ICAO Doc 7488) up to 20 km, enough to turn
// IAS/Mach into true airspeed and to check temperatures.
const (
	isaT0     = 288.15  // K at sea level
	isaLapse  = 0.0065  // K/m below the tropopause
	isaTropoH = 11000.0 // m
	isaP0     = 101325.0
	isaA0     = 661.4786 // kt, speed of sound at sea level
)

func isaTemperatureK(ft int32) float64 {
	h := math.Min(float64(ft)*0.3048, isaTropoH)
	return isaT0 - isaLapse*h
}

func isaTemperature(ft int32) float64 { return isaTemperatureK(ft) - 273.15 }

func isaPressure(ft int32) float64 {
	h := float64(ft) * 0.3048
	if h <= isaTropoH {
		return isaP0 * math.Pow(1-isaLapse*h/isaT0, 5.25588)
	}
	return 22632.06 * math.Exp(-0.000157688*(h-isaTropoH))
}

func speedOfSound(ft int32) float64 { return isaA0 * math.Sqrt(isaTemperatureK(ft)/isaT0) }

// casToMach converts a calibrated airspeed (IAS is taken as CAS) in knots
// at a pressure altitude in feet into a Mach number (subsonic formulas).
func casToMach(cas float64, ft int32) float64 {
	qc := isaP0 * (math.Pow(1+0.2*(cas/isaA0)*(cas/isaA0), 3.5) - 1)
	return math.Sqrt(5 * (math.Pow(qc/isaPressure(ft)+1, 2.0/7) - 1))
}
