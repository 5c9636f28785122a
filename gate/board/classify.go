package board

import (
	"slices"
	"strings"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/reference"
)

// Classifier maps a track's identity claims to a drone-database side: a
// Remote ID serial number's ANSI/CTA-2063-A manufacturer code, the Remote
// ID UA type, the MAVLink MAV_TYPE, an ADS-B emitter category, or the
// record a product claim names (issue 25).
func Classifier(db *reference.DB) func(t *fusion.Track) gate.Side {
	// The track carries category names; the database is queried by number.
	uaTypes, mavTypes := map[string]int{}, map[string]int{}
	for v := 0; v < 16; v++ {
		if n := remoteid.UATypeName(uint8(v)); n != "" {
			uaTypes[n] = v
		}
	}
	for v := 0; v < 256; v++ {
		if n := mavlink.EnumName("MAV_TYPE", uint32(v)); n != "" {
			mavTypes[n] = v
		}
	}
	return func(t *fusion.Track) gate.Side {
		q, claimed := classQuery(t, uaTypes, mavTypes)
		if !claimed {
			return ""
		}
		m := db.Lookup(q)
		if m.Matched == 0 {
			return ""
		}
		return gate.Side(m.Side)
	}
}

// djiManufacturerCode is DJI's ANSI/CTA-2063-A manufacturer code.
const djiManufacturerCode = "1581"

// classQuery is the drone-database query of a track's claims; claimed is
// false when the track claims nothing the database knows.
func classQuery(t *fusion.Track, uaTypes, mavTypes map[string]int) (q reference.Query, claimed bool) {
	q = reference.NewQuery()
	if len(t.UASID) >= 4 {
		q.SerialNumber, claimed = t.UASID, true
	}
	// DJI DroneID (issue 25) is DJI's own broadcast: its serial is not an
	// ANSI/CTA-2063-A one, but the sender claims to be a DJI aircraft,
	// which the database knows by DJI's manufacturer code.
	if slices.Contains(t.Protocols, string(decode.DJI)) && !strings.HasPrefix(t.UASID, djiManufacturerCode) {
		q.SerialNumber, claimed = djiManufacturerCode, true
	}
	// Issue 25: a product claim that names a database record (a DJI
	// DroneID product type, a Self-ID text such as "DJI Mavic 3") narrows
	// the candidates to that record; an unknown product narrows nothing.
	if t.Product != nil && t.Product.Match.ID != "" {
		q.ProductID, claimed = t.Product.Match.ID, true
	}
	switch t.CategoryKind {
	case decode.CategoryEmitter:
		q.EmitterCategory, claimed = t.Category, true
	case decode.CategoryUAType:
		if v := uaTypes[t.Category]; v != 0 {
			q.UAType, claimed = v, true
		}
	case decode.CategoryMAVType:
		if v := mavTypes[t.Category]; v != 0 {
			q.MAVType, claimed = v, true
		}
	}
	return q, claimed
}
