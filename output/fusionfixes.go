package output

import "github.com/cuasd/cuasd/fusion"

// StoreFixes offers a fusion store's accepted fixes as a FixFeed, as
// cuasd serve hands them to its outputs (and the pipeline benchmark to
// its recorder). A nil store offers none (ErrNoFixes).
func StoreFixes(st *fusion.Store) FixFeed { return storeFixes{st} }

type storeFixes struct{ st *fusion.Store }

// FeedFixes implements FixFeed. The fix handed on is one value per feed,
// reused: the store calls under its lock, one fix at a time, and a fresh
// one per fix would be an allocation on fusion's path.
func (f storeFixes) FeedFixes(fn func(*Fix)) (func(), error) {
	if f.st == nil {
		return nil, ErrNoFixes
	}
	var o Fix
	return f.st.FeedFixes(func(x *fusion.Fix) {
		o = Fix{TrackID: x.TrackID, Protocol: string(x.Protocol), Sensor: x.Sensor, UnixNano: x.T, Lat: x.Lat, Lon: x.Lon,
			HasAlt: x.HasAlt, AltM: x.AltM, AltKind: x.AltKind,
			HasVel: x.HasVel, SpeedMps: x.SpeedMps, HeadingDeg: x.HeadingDeg, VRateMps: x.VRateMps}
		fn(&o)
	}), nil
}
