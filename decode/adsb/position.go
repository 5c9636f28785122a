package adsb

// LatLon is a position in degrees (WGS-84).
type LatLon struct {
	Lat, Lon float64
}

// GlobalPosition resolves the position of a pair of decoded position
// messages: even must carry an even and odd an odd CPR report, from the
// same address and both airborne or both surface; newestOdd says which was
// received last, and that one decides the result. Surface pairs need ref
// (the receiver's position) to pick among the candidate quadrants; for
// airborne pairs ref may be nil and is not used.
func GlobalPosition(even, odd *Message, newestOdd bool, ref *LatLon) (lat, lon float64, err error) {
	if !even.HasCPR || !odd.HasCPR {
		return 0, 0, ErrNotPosition
	}
	if even.Address != odd.Address {
		return 0, 0, ErrAddressMismatch
	}
	if even.IsSurface() != odd.IsSurface() {
		return 0, 0, ErrMixedPosition
	}
	if even.IsSurface() {
		if ref == nil {
			return 0, 0, ErrReference
		}
		return CPRGlobalSurface(even.CPR, odd.CPR, newestOdd, ref.Lat, ref.Lon)
	}
	return CPRGlobalAirborne(even.CPR, odd.CPR, newestOdd)
}

// LocalPosition resolves one decoded position message with a reference
// position: within 180 NM of the aircraft for airborne reports, 45 NM for
// surface ones.
func LocalPosition(m *Message, ref LatLon) (lat, lon float64, err error) {
	if !m.HasCPR {
		return 0, 0, ErrNotPosition
	}
	if m.IsSurface() {
		return CPRLocalSurface(m.CPR, ref.Lat, ref.Lon)
	}
	return CPRLocalAirborne(m.CPR, ref.Lat, ref.Lon)
}
