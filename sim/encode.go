package sim

import (
	"encoding/binary"
	"math"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/mavlink"
)

// ---- ADS-B (DO-260B extended squitter) ----

// df17 assembles a DF17 frame from an ICAO address and a 56-bit ME field
// and appends its CRC-24 parity.
func df17(dst *[14]byte, icao uint32, me uint64) {
	dst[0] = 17<<3 | 5 // DF17, CA 5 (level 2+ transponder, airborne)
	dst[1], dst[2], dst[3] = byte(icao>>16), byte(icao>>8), byte(icao)
	for i := 0; i < 7; i++ {
		dst[4+i] = byte(me >> (48 - 8*i))
	}
	p := adsb.CRC24(dst[:11])
	dst[11], dst[12], dst[13] = byte(p>>16), byte(p>>8), byte(p)
}

const callsignChars = "#ABCDEFGHIJKLMNOPQRSTUVWXYZ##### ###############0123456789######"

// encodeIdent builds an identification message (TC 4, category A-set).
func encodeIdent(dst *[14]byte, icao uint32, callsign string, category uint8) {
	me := uint64(4)<<51 | uint64(category&7)<<48
	for i := 0; i < 8; i++ {
		c := byte(' ')
		if i < len(callsign) {
			c = callsign[i]
		}
		idx := 32 // space
		for j := 0; j < len(callsignChars); j++ {
			if callsignChars[j] == c && c != '#' {
				idx = j
				break
			}
		}
		me |= uint64(idx) << (42 - 6*i)
	}
	df17(dst, icao, me)
}

// cprEncode is the airborne CPR encoding of DO-260B A.1.7.4 (Nb = 17).
func cprEncode(lat, lon float64, odd bool) (yz, xz uint32) {
	i := 0.0
	if odd {
		i = 1
	}
	dlat := 360 / (60 - i)
	y := math.Floor(131072*mod(lat, dlat)/dlat + 0.5)
	rlat := dlat * (y/131072 + math.Floor(lat/dlat))
	nl := float64(adsb.NL(rlat))
	dlon := 360.0
	if nl-i > 0 {
		dlon = 360 / (nl - i)
	}
	x := math.Floor(131072*mod(lon, dlon)/dlon + 0.5)
	return uint32(y) & 0x1FFFF, uint32(x) & 0x1FFFF
}

func mod(a, b float64) float64 { return a - b*math.Floor(a/b) }

// encodePosition builds an airborne position message (TC 11, barometric
// altitude in 25 ft steps).
func encodePosition(dst *[14]byte, icao uint32, lat, lon, altFt float64, odd bool) {
	n := uint64(math.Max(0, math.Round((altFt+1000)/25)))
	alt := (n&0x7F0)<<1 | 0x10 | n&0xF
	yz, xz := cprEncode(lat, lon, odd)
	me := uint64(11)<<51 | alt<<36 | uint64(yz)<<17 | uint64(xz)
	if odd {
		me |= 1 << 34
	}
	df17(dst, icao, me)
}

// encodeVelocity builds an airborne velocity message (TC 19, subtype 1,
// ground speed) from speed (kt), track (deg) and vertical rate (ft/min).
func encodeVelocity(dst *[14]byte, icao uint32, speedKt, trackDeg, vrFpm float64) {
	rad := trackDeg * math.Pi / 180
	vew := speedKt * math.Sin(rad)
	vns := speedKt * math.Cos(rad)
	comp := func(v float64) (dir, mag uint64) {
		if v < 0 {
			dir = 1
		}
		mag = uint64(math.Min(1022, math.Round(math.Abs(v)))) + 1
		return
	}
	dew, mew := comp(vew)
	dns, mns := comp(vns)
	var svr uint64
	if vrFpm < 0 {
		svr = 1
	}
	vr := uint64(math.Min(510, math.Round(math.Abs(vrFpm)/64))) + 1
	me := uint64(19)<<51 | 1<<48 | dew<<42 | mew<<32 | dns<<31 | mns<<21 | 1<<20 | svr<<19 | vr<<10
	df17(dst, icao, me)
}

// ---- MAVLink v2 ----

// appendMAVLink2 appends a MAVLink 2 frame of message id with payload
// (trailing zeros truncated, as senders do).
func appendMAVLink2(dst []byte, seq, sys, comp uint8, id uint32, payload []byte) []byte {
	def := mavlink.Lookup(id)
	for len(payload) > 1 && payload[len(payload)-1] == 0 {
		payload = payload[:len(payload)-1]
	}
	start := len(dst)
	dst = append(dst, 0xFD, byte(len(payload)), 0, 0, seq, sys, comp, byte(id), byte(id>>8), byte(id>>16))
	dst = append(dst, payload...)
	return binary.LittleEndian.AppendUint16(dst, mavlink.Checksum(dst[start+1:], def.CRCExtra))
}

// MAVLink message ids and wire layouts used here (common.xml).
const (
	mavHeartbeat         = 0
	mavGlobalPositionInt = 33
)

func heartbeatPayload(mavType uint8) []byte {
	p := make([]byte, 9)
	// custom_mode u32 | type | autopilot (3 = ArduPilot) | base_mode (armed|custom) | system_status (4 active) | mavlink_version 3
	p[4], p[5], p[6], p[7], p[8] = mavType, 3, 0x80|0x01, 4, 3
	return p
}

func globalPositionPayload(bootMs uint32, lat, lon, altM, relAltM, speed, heading, vr float64) []byte {
	p := make([]byte, 28)
	binary.LittleEndian.PutUint32(p[0:], bootMs)
	binary.LittleEndian.PutUint32(p[4:], uint32(int32(math.Round(lat*1e7))))
	binary.LittleEndian.PutUint32(p[8:], uint32(int32(math.Round(lon*1e7))))
	binary.LittleEndian.PutUint32(p[12:], uint32(int32(math.Round(altM*1000))))
	binary.LittleEndian.PutUint32(p[16:], uint32(int32(math.Round(relAltM*1000))))
	rad := heading * math.Pi / 180
	binary.LittleEndian.PutUint16(p[20:], uint16(int16(math.Round(speed*math.Cos(rad)*100))))
	binary.LittleEndian.PutUint16(p[22:], uint16(int16(math.Round(speed*math.Sin(rad)*100))))
	binary.LittleEndian.PutUint16(p[24:], uint16(int16(math.Round(-vr*100))))
	binary.LittleEndian.PutUint16(p[26:], uint16(math.Round(mod(heading, 360)*100)))
	return p
}

// ADSBPosition is a DF17 airborne position squitter (type code 11) of icao
// at lat, lon and altFt, in its even or odd CPR format: what tests and
// tools need to fabricate a track frame by frame.
func ADSBPosition(icao uint32, lat, lon, altFt float64, odd bool) [14]byte {
	var f [14]byte
	encodePosition(&f, icao, lat, lon, altFt, odd)
	return f
}

// ModeSAltitudeReply is a DF4 surveillance altitude reply of icao at altFt
// (25 ft steps, airborne, no alert): the reply an aircraft without ADS-B
// sends when interrogated, whose address is only in its parity (AP = the
// CRC-24 of the first 32 bits XOR the address). Multilateration locates
// such an aircraft from the times several receivers heard it.
func ModeSAltitudeReply(icao uint32, altFt float64) [7]byte {
	n := uint32(math.Max(0, math.Round((altFt+1000)/25))) & 0x7FF
	ac := (n&0x7E0)<<2 | (n&0x10)<<1 | 0x10 | n&0x0F
	var f [7]byte
	f[0] = 4 << 3 // DF4, FS 0
	f[1], f[2], f[3] = byte(ac>>16), byte(ac>>8), byte(ac)
	p := adsb.CRC24(f[:4]) ^ icao
	f[4], f[5], f[6] = byte(p>>16), byte(p>>8), byte(p)
	return f
}
