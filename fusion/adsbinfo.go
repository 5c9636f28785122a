package fusion

import (
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
)

// Issue 21: readsb's per-aircraft ADS-B fields (type, air/ground, nic, rc,
// version, nac_v, sil, sil_type, nav_heading), kept from the aircraft's own
// messages the way readsb's track.c keeps them.

// ADSBInfo is a track's readsb ADS-B state: each value is the aircraft's
// own latest claim; Has* says it was ever received.
type ADSBInfo struct {
	// AddressType is readsb's "type": the address type of the message
	// that gave the last position; before any position, the first
	// message's, except that DF17 without a position is "mode_s" (readsb).
	AddressType adsb.AddressType
	// AirGround is the air/ground state (none, uncertain, ground, airborne).
	AirGround decode.AirGround
	// NIC and RcM are the navigation integrity category and containment
	// radius (metres; 0 unknown) of the position, when HasNIC.
	HasNIC bool
	NIC    uint8
	RcM    uint16
	// Version is the ADS-B version an operational status message
	// announced, when HasVersion.
	HasVersion bool
	Version    uint8
	HasNACv    bool
	NACv       uint8
	// SIL and SILType: announced (operational status, target state) or,
	// for a version 0 aircraft, derived from the position type code.
	HasSIL        bool
	SIL           uint8
	SILType       decode.SILType
	HasNavHeading bool
	NavHeadingDeg float64
}

// adsbState is what a track keeps for ADSBInfo. It is allocated on the
// first observation that carries the issue 21 block, so other tracks pay
// one pointer.
type adsbState struct {
	ADSBInfo
	// typeT is the receive time the address type was last set.
	typeT int64
	// cprT is the receive time of the last CPR frame, whose air/ground
	// reading outranks other messages' for 20 s; cprSurface says whether
	// it was a surface one.
	cprT       int64
	cprSurface bool
	// altT is the time of the last altitude an ADS-B message (DF17/18)
	// gave: a Mode S reply's altitude does not replace it for
	// ADSBAltitudePriority (issue 30, readsb's source priority).
	altT int64
	// The NIC supplements A (operational status v1/v2) and C (surface
	// operational status v2).
	nicA, nicC bool
}

// addrRank orders address types as readsb does (addrtype_t, earlier is
// more direct; mode_s ranks between the ICAO rebroadcasts and the other
// address formats).
func addrRank(a adsb.AddressType) float32 {
	switch a {
	case adsb.AddrADSBICAO:
		return 0
	case adsb.AddrADSBICAONT:
		return 1
	case adsb.AddrADSRICAO:
		return 2
	case adsb.AddrTISBICAO:
		return 3
	case adsb.AddrModeS:
		return 4.5
	case adsb.AddrADSBOther:
		return 8
	case adsb.AddrADSROther:
		return 9
	case adsb.AddrTISBTrackfile:
		return 10
	case adsb.AddrTISBOther:
		return 11
	}
	return 15
}

// Times of readsb's address type hysteresis (3/4 and 3/2 of its 60 s
// TRACK_EXPIRE) and of its "recent CPR decides air/ground" window.
const (
	typeBetterAfter = 45e9
	typeWorseAfter  = 90e9
	cprGroundWindow = 20e9
)

// applyADSBInfo merges the observation's issue 21 block into the track,
// before its position is resolved.
func applyADSBInfo(t *track, o *decode.Observation, recv int64) {
	if o.Protocol != decode.ADSB || !o.HasADSBInfo() {
		return
	}
	if t.adsb == nil {
		t.adsb = &adsbState{}
	}
	a := t.adsb
	a.updateType(adsb.AddressType(o.AddrType), recv, t.cpr != nil && t.cpr.hasFix)
	a.updateAirGround(o, recv)
	a.mergeClaims(o)
	switch {
	case o.HasSIL:
		a.setSIL(o.SIL, o.SILType)
	case o.PosTypeCode != 0 && (!a.HasVersion || a.Version == 0):
		// readsb (compute_v0_sil, ED-102A table N-8): a version 0
		// aircraft states no SIL; its position type code implies one.
		if sil, ok := v0SIL(o.PosTypeCode); ok {
			a.setSIL(sil, decode.SILUnknown)
		}
	}
}

// mergeClaims takes the version, the NIC supplements, NACv and the
// selected heading the message states.
func (a *adsbState) mergeClaims(o *decode.Observation) {
	if o.HasVersion {
		a.HasVersion, a.Version = true, o.Version
	}
	if o.HasNICA {
		a.nicA = o.NICA
	}
	if o.HasNICC {
		a.nicC = o.NICC
	}
	if o.HasNACv {
		a.HasNACv, a.NACv = true, o.NACv
	}
	if o.HasNavHeading {
		a.HasNavHeading, a.NavHeadingDeg = true, o.NavHeadingDeg
	}
}

// setSIL takes a SIL; an "unknown" type does not replace a stated one.
func (a *adsbState) setSIL(sil uint8, typ decode.SILType) {
	if !a.HasSIL || typ != decode.SILUnknown {
		a.SILType = typ
	}
	a.HasSIL, a.SIL = true, sil
}

// v0SIL is the SIL a version 0 position type code implies (ED-102A table
// N-8, as readsb's compute_v0_sil).
func v0SIL(tc uint8) (uint8, bool) {
	switch {
	case tc >= 5 && tc <= 17, tc == 20, tc == 21:
		return 2, true
	case tc == 18, tc == 22:
		return 0, true
	}
	return 0, false
}

// updateType applies readsb's address type rule for one message: a type
// at least as direct replaces the current one after 45 s, a less direct
// one after 90 s; a DF17 message before any ADS-B position makes the
// aircraft "mode_s". (A position sets the type at once: positionType.)
func (a *adsbState) updateType(typ adsb.AddressType, recv int64, hasFix bool) {
	if typ == adsb.AddrUnknown {
		return
	}
	age := recv - a.typeT
	first := a.AddressType == adsb.AddrUnknown
	better := addrRank(typ) <= addrRank(a.AddressType)
	if !first && !(better && age > typeBetterAfter) && !(!better && age > typeWorseAfter) {
		return
	}
	hasADSBPos := hasFix && addrRank(a.AddressType) < addrRank(adsb.AddrADSRICAO)
	if typ == adsb.AddrADSBICAO && !hasADSBPos {
		typ = adsb.AddrModeS // readsb: no ADS-B type without an ADS-B position
	}
	a.AddressType, a.typeT = typ, recv
}

// updateAirGround applies readsb's air/ground rules: a definite state
// replaces any, an uncertain one only an uncertain or absent one — except
// that for 20 s after a CPR frame the frames decide (they are more
// reliable); and a CPR frame decides: surface is on the ground, airborne
// is airborne when the message says so or the aircraft was on the surface
// before, and makes a grounded aircraft uncertain otherwise.
func (a *adsbState) updateAirGround(o *decode.Observation, recv int64) {
	cur, msg := a.AirGround, o.AirGround
	recentCPR := a.cprT != 0 && recv-a.cprT < cprGroundWindow
	if msg != decode.AirGroundNone && (cur <= decode.AirGroundUncertain || msg != decode.AirGroundUncertain) &&
		!(recentCPR && cur >= decode.AirGroundGround) {
		a.AirGround = msg
	}
	if !o.HasCPR {
		return
	}
	switch {
	case o.CPRSurface:
		a.AirGround = decode.AirGroundGround
	case a.cprT != 0 && a.cprSurface || msg == decode.AirGroundAirborne:
		a.AirGround = decode.AirGroundAirborne
	case msg == decode.AirGroundUncertain && cur == decode.AirGroundGround:
		a.AirGround = decode.AirGroundUncertain
	}
	a.cprT, a.cprSurface = recv, o.CPRSurface
}

// positionFix records what a position decoded from CPR frames is worth:
// readsb takes the address type of the message whose position it accepts,
// and the NIC and Rc of the frames — the worse of the pair for a global
// decode; the frame's for a local one, lowered to the previous position's
// (readsb's doLocalCPR takes the smaller of each, Rc included).
func (a *adsbState) positionFix(o *decode.Observation, recv int64, c *cprState, global bool) {
	if o.AddrType != 0 {
		a.AddressType, a.typeT = adsb.AddressType(o.AddrType), recv
	}
	cur := c.even
	if o.CPROdd {
		cur = c.odd
	}
	if !cur.hasNIC || global && !(c.even.hasNIC && c.odd.hasNIC) {
		a.HasNIC, a.NIC, a.RcM = false, 0, 0
		return
	}
	nic, rc := cur.nic, cur.rc
	switch {
	case global:
		nic, rc = min(c.even.nic, c.odd.nic), max(c.even.rc, c.odd.rc)
	case a.HasNIC:
		nic, rc = min(nic, a.NIC), min(rc, a.RcM)
	}
	a.HasNIC, a.NIC, a.RcM = true, nic, rc
}

// frameNIC is the NIC and Rc of one CPR frame, from its type code, its
// NIC-B and the aircraft's NIC-A, NIC-C and version (readsb's
// compute_nic/compute_rc, DO-260B tables 2-14 and 2-15 and their version
// 0 and 1 counterparts).
func (a *adsbState) frameNIC(tc uint8, nicB bool) (uint8, uint16) {
	v := uint8(0)
	if a.HasVersion {
		v = a.Version
	}
	return nicOf(tc, v, a.nicA, nicB, a.nicC), rcOf(tc, v, a.nicA, nicB, a.nicC)
}

// nicByTC and rcByTC are the NIC and Rc (metres, rounded up as readsb
// does: 185.2 m is 186) of the type codes no supplement refines; 0 is
// unknown, and the refined codes (7, 8, 11, 13, 16) are computed below.
var (
	nicByTC = [23]uint8{5: 11, 6: 10, 9: 11, 10: 10, 12: 7, 13: 6, 14: 5, 15: 4, 17: 1, 20: 11, 21: 10}
	rcByTC  = [23]uint16{5: 8, 6: 25, 9: 8, 10: 25, 12: 371, 14: 1852, 15: 3704, 17: 37040, 20: 8, 21: 25}
)

// nicOf is readsb's compute_nic.
func nicOf(tc, version uint8, nicA, nicB, nicC bool) uint8 {
	switch tc {
	case 7, 11:
		if finer(tc, version, nicA, nicB, nicC) {
			return 9
		}
		return 8
	case 8:
		if version != 2 || !nicA && !nicC {
			return 0
		}
		if nicA && nicC {
			return 7
		}
		return 6
	case 16:
		if nicA && nicB {
			return 3
		}
		return 2
	}
	if int(tc) < len(nicByTC) {
		return nicByTC[tc]
	}
	return 0
}

// finer reports whether the supplements raise type code 7 (surface) or 11
// (airborne) to NIC 9, Rc < 75 m: NIC-A in version 1; in version 2 NIC-A
// with NIC-C clear (7) or NIC-B set (11).
func finer(tc, version uint8, nicA, nicB, nicC bool) bool {
	second := nicB
	if tc == 7 {
		second = !nicC
	}
	return nicA && (version == 1 || version == 2 && second)
}

// rcOf is readsb's compute_rc: the containment radius in metres (0
// unknown).
func rcOf(tc, version uint8, nicA, nicB, nicC bool) uint16 {
	switch tc {
	case 7, 11:
		if finer(tc, version, nicA, nicB, nicC) {
			return 75
		}
		return 186 // 0.1 NM
	case 8:
		return rc8(version, nicA, nicC)
	case 13:
		return rc13(version, nicA, nicB)
	case 16:
		return rc16(version, nicA, nicB)
	}
	if int(tc) < len(rcByTC) {
		return rcByTC[tc]
	}
	return 0
}

// rc8 is the Rc of surface type code 8 (defined from version 2 on).
func rc8(version uint8, nicA, nicC bool) uint16 {
	switch {
	case version != 2:
		return 0
	case nicA && nicC:
		return 371 // 0.2 NM
	case nicA:
		return 556 // 0.3 NM
	case nicC:
		return 926 // 0.5 NM
	}
	return 0
}

// rc13 is the Rc of airborne type code 13.
func rc13(version uint8, nicA, nicB bool) uint16 {
	switch {
	case version == 2 && !nicA && nicB:
		return 556
	case version == 2 && nicA && nicB, version == 1 && nicA:
		return 1112 // 0.6 NM
	case version == 2 && nicA:
		return 0 // NIC-A without NIC-B: a combination DO-260B does not define
	}
	return 926
}

// rc16 is the Rc of airborne type code 16.
func rc16(version uint8, nicA, nicB bool) uint16 {
	switch {
	case version == 2 && nicA && nicB, version == 1 && nicA:
		return 7408 // 4 NM
	case version == 1, version == 2:
		return 14816 // 8 NM
	}
	return 18520 // 10 NM
}
