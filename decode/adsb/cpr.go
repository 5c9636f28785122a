package adsb

import "math"

// cprScale is 2^17: CPR latitudes and longitudes are 17-bit fractions of a zone.
const cprScale = 131072.0

// NL returns the number of longitude zones at latitude lat (degrees): 59 at
// the equator down to 1 above 87°, from the table of transition latitudes
// of DO-260B A.1.7.2.
func NL(lat float64) int {
	lat = math.Abs(lat)
	// Binary search over the ascending transition latitudes.
	lo, hi := 0, len(nlTable)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if lat < nlTable[mid] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return 59 - lo
}

func modInt(a, b int) int {
	r := a % b
	if r < 0 {
		r += b
	}
	return r
}

// CPRGlobalAirborne resolves an even/odd pair of airborne position reports
// to a position without any reference (DO-260B A.1.7.7). The newest report
// decides the result: newestOdd says which one that is. The pair is
// rejected, never guessed, when either latitude falls outside ±90°
// (ErrLatRange) or the two latitudes lie in different longitude-zone bands
// (ErrZone: the aircraft crossed a band edge between the reports). It does
// not check that the two reports are recent enough to belong together:
// pairing over time is the caller's job (dump1090 pairs airborne reports
// at most 10 s apart).
func CPRGlobalAirborne(even, odd CPR, newestOdd bool) (lat, lon float64, err error) {
	return cprGlobal(even, odd, newestOdd, 360)
}

func cprGlobal(even, odd CPR, newestOdd bool, span float64) (lat0, lat1 float64, err error) {
	if even.Odd || !odd.Odd {
		return 0, 0, ErrNotPair
	}
	lat0, lat1 = cprGlobalLat(even, odd, span)
	if lat0 < -90 || lat0 > 90 || lat1 < -90 || lat1 > 90 {
		return 0, 0, ErrLatRange
	}
	return cprGlobalLon(even, odd, newestOdd, span, lat0, lat1)
}

// cprGlobalLat returns the even and odd latitudes of a pair (airborne:
// span 360, wrapped to -90..270 then shifted; surface: span 90, in 0..90).
func cprGlobalLat(even, odd CPR, span float64) (lat0, lat1 float64) {
	dlat0, dlat1 := span/60, span/59
	yz0, yz1 := float64(even.Lat)/cprScale, float64(odd.Lat)/cprScale
	j := cprLatIndex(even, odd)
	lat0 = dlat0 * (float64(modInt(j, 60)) + yz0)
	lat1 = dlat1 * (float64(modInt(j, 59)) + yz1)
	if span == 360 {
		// Southern latitudes come out as 270..360.
		if lat0 >= 270 {
			lat0 -= 360
		}
		if lat1 >= 270 {
			lat1 -= 360
		}
	}
	return lat0, lat1
}

// cprLatIndex is the latitude index j of a global decode: how many zones
// separate the even and odd encodings.
func cprLatIndex(even, odd CPR) int {
	yz0, yz1 := float64(even.Lat)/cprScale, float64(odd.Lat)/cprScale
	return int(math.Floor(59*yz0 - 60*yz1 + 0.5))
}

// cprLonIndex is the longitude index m of a global decode at a latitude
// with nl longitude zones.
func cprLonIndex(even, odd CPR, nl int) int {
	xz0, xz1 := float64(even.Lon)/cprScale, float64(odd.Lon)/cprScale
	return int(math.Floor(xz0*float64(nl-1) - xz1*float64(nl) + 0.5))
}

// cprGlobalLon finishes a global decode from the two latitudes: zone check,
// then the longitude of the newest report.
func cprGlobalLon(even, odd CPR, newestOdd bool, span, lat0, lat1 float64) (lat, lon float64, err error) {
	nl := NL(lat0)
	if nl != NL(lat1) {
		return 0, 0, ErrZone
	}
	xz0, xz1 := float64(even.Lon)/cprScale, float64(odd.Lon)/cprScale
	m := cprLonIndex(even, odd, nl)
	if newestOdd {
		ni := max(nl-1, 1)
		lat = lat1
		lon = span / float64(ni) * (float64(modInt(m, ni)) + xz1)
	} else {
		ni := max(nl, 1)
		lat = lat0
		lon = span / float64(ni) * (float64(modInt(m, ni)) + xz0)
	}
	if span == 360 {
		lon -= math.Floor((lon+180)/360) * 360 // to [-180, 180)
	}
	return lat, lon, nil
}

// CPRGlobalSurface resolves an even/odd pair of surface position reports.
// Surface CPR zones are a quarter of airborne ones, so a pair fixes the
// position only up to a choice of four longitudes 90° apart and of the
// northern or southern hemisphere: the reference (refLat, refLon), the
// receiver's or the last known position, picks the candidate nearest to it.
// The newest report decides the result. Errors are as for
// [CPRGlobalAirborne]; pairing over time is the caller's job.
func CPRGlobalSurface(even, odd CPR, newestOdd bool, refLat, refLon float64) (lat, lon float64, err error) {
	if !validRef(refLat, refLon) {
		return 0, 0, ErrReference
	}
	if even.Odd || !odd.Odd {
		return 0, 0, ErrNotPair
	}
	lat0, lat1 := cprGlobalLat(even, odd, 90)
	lat0 = surfaceQuadrant(lat0, refLat)
	lat1 = surfaceQuadrant(lat1, refLat)
	if lat0 < -90 || lat0 > 90 || lat1 < -90 || lat1 > 90 {
		return 0, 0, ErrLatRange
	}
	lat, lon, err = cprGlobalLon(even, odd, newestOdd, 90, lat0, lat1)
	if err != nil {
		return 0, 0, err
	}
	// lon is in [0, 90); move it to the copy nearest the reference, then
	// normalise to [-180, 180).
	lon += math.Floor((refLon-lon+45)/90) * 90
	lon -= math.Floor((lon+180)/360) * 360
	return lat, lon, nil
}

// surfaceQuadrant picks the northern (0..90) or southern (-90..0) reading of
// a surface latitude, whichever is nearer the reference. A latitude of
// exactly 0 could also be a pole; the reference decides.
func surfaceQuadrant(lat, refLat float64) float64 {
	switch {
	case lat == 0:
		if refLat < -45 {
			return -90
		}
		if refLat > 45 {
			return 90
		}
	case lat-refLat > 45:
		return lat - 90
	}
	return lat
}

// CPRLocalAirborne resolves one airborne position report with a reference
// position (DO-260B A.1.7.5): the answer is the encoded position nearest
// the reference, which is right when the reference is within about 180 NM
// (half a latitude zone) of the aircraft: a receiver's own position, or
// the aircraft's last known one. ErrLatRange is returned for answers
// beyond ±90°, ErrReference for a reference that is not a latitude and
// longitude.
func CPRLocalAirborne(c CPR, refLat, refLon float64) (lat, lon float64, err error) {
	return cprLocal(c, refLat, refLon, 360)
}

// CPRLocalSurface resolves one surface position report with a reference
// position, which must be within about 45 NM of the aircraft (surface
// zones are a quarter of airborne ones).
func CPRLocalSurface(c CPR, refLat, refLon float64) (lat, lon float64, err error) {
	return cprLocal(c, refLat, refLon, 90)
}

func cprLocal(c CPR, refLat, refLon, span float64) (lat, lon float64, err error) {
	if !validRef(refLat, refLon) {
		return 0, 0, ErrReference
	}
	l := cprLocalIndices(c, refLat, refLon, span)
	if l.lat < -90 || l.lat > 90 {
		return 0, 0, ErrLatRange
	}
	return l.lat, l.lon, nil
}

// localDecode holds a local decode and its intermediate values.
type localDecode struct {
	dlat, dlon float64 // zone sizes
	j, m       float64 // latitude and longitude zone indices
	lat, lon   float64
}

func cprLocalIndices(c CPR, refLat, refLon, span float64) localDecode {
	var l localDecode
	i := 0.0
	if c.Odd {
		i = 1
	}
	l.dlat = span / (60 - i)
	yz := float64(c.Lat) / cprScale
	// The zone index whose encoded position is nearest the reference. The
	// quotient and the remainder must come from one division: taking
	// floor(ref/dlat) and math.Mod(ref, dlat) separately disagrees when
	// the reference sits on a zone edge (ref/dlat rounds up to an integer
	// while the exact remainder is just under dlat), and the answer jumps
	// a whole zone.
	q := math.Floor(refLat / l.dlat)
	l.j = q + math.Floor(0.5+(refLat-q*l.dlat)/l.dlat-yz)
	l.lat = l.dlat * (l.j + yz)
	ni := max(float64(NL(l.lat))-i, 1)
	l.dlon = span / ni
	xz := float64(c.Lon) / cprScale
	q = math.Floor(refLon / l.dlon)
	l.m = q + math.Floor(0.5+(refLon-q*l.dlon)/l.dlon-xz)
	l.lon = l.dlon * (l.m + xz)
	l.lon -= math.Floor((l.lon+180)/360) * 360
	return l
}

func validRef(lat, lon float64) bool {
	return lat >= -90 && lat <= 90 && lon >= -180 && lon <= 360 && !math.IsNaN(lat) && !math.IsNaN(lon)
}
