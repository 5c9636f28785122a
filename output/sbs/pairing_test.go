package sbs

import (
	"math"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testcapture"
)

// heardHalf is one airborne position message of the capture and its
// receiver time (ns on the capture's 12 MHz clock).
type heardHalf struct {
	m  adsb.Message
	ns int64
}

// TestHalvesOfTwoReceiversPairOnlyForTheFirstPosition: receiver A, ahead
// in a burst, has sent an aircraft's messages half a minute past receiver
// B's; B's first odd message then comes, its UTC time held at its arrival
// next to A's. Paired with A's even half, heard 30 s later, it gave a
// position far off the aircraft's; decoded locally against A's position
// it gives the position B's own pair decodes to.
func TestHalvesOfTwoReceiversPairOnlyForTheFirstPosition(t *testing.T) {
	byAddr := map[uint32][]heardHalf{}
	for _, r := range testcapture.Records(t) {
		var m adsb.Message
		if len(r.Data) == 14 && adsb.Decode(r.Data, &m) == nil && m.HasCPR && m.Kind == adsb.KindAirbornePosition {
			byAddr[m.Address] = append(byAddr[m.Address], heardHalf{m, int64(r.TS * 1000 / 12)})
		}
	}
	tested := 0
	for addr, hs := range byAddr {
		e0, o0, e1, o1, ok := halvesApart(hs, 30e9)
		if !ok {
			continue
		}
		// B's own pair decodes to where the aircraft was (adsb's decoder,
		// tested against pyModeS's vectors).
		wantLat, wantLon, err := adsb.CPRGlobalAirborne(e0.m.CPR, o0.m.CPR, true)
		if err != nil {
			continue
		}
		arrive := int64(1_700_000_000e9)
		onA := func(h heardHalf) sensorclock.Time {
			return sensorclock.Time{UnixNano: arrive, SensorNs: h.ns, Clock: 1, Source: sensorclock.FromReceiver}
		}
		var a msgAircraft
		a.position(&e1.m, onA(e1))
		if _, _, ok := a.position(&o1.m, onA(o1)); !ok {
			continue
		}
		bAt := sensorclock.Time{UnixNano: arrive + 1e6, SensorNs: o0.ns + 5e12, Clock: 2, Source: sensorclock.FromReceiver}
		a.even = cprHalf{t: keep(onA(e1), true, false), lat: e1.m.CPR.Lat, lon: e1.m.CPR.Lon} // A's even half, the newest
		lat, lon, ok := a.position(&o0.m, bAt)
		if !ok || math.Abs(lat-wantLat) > 1e-6 || math.Abs(lon-wantLon) > 1e-6 {
			t.Errorf("%06X: B's first odd half after A's halves 30 s later: %.5f,%.5f (%v), want its own pair's %.5f,%.5f",
				addr, lat, lon, ok, wantLat, wantLon)
		}
		tested++
	}
	if tested < 3 {
		t.Fatalf("%d aircraft of the capture tested: too few to tell", tested)
	}
}

// halvesApart finds an even and an odd half within 2 s of each other
// and another such pair at least apart later.
func halvesApart(hs []heardHalf, apart int64) (e0, o0, e1, o1 heardHalf, ok bool) {
	pair := func(from int) (e, o heardHalf, next int, ok bool) {
		for i := from; i+1 < len(hs); i++ {
			a, b := hs[i], hs[i+1]
			if !a.m.CPR.Odd && b.m.CPR.Odd && b.ns-a.ns < 2e9 {
				return a, b, i + 2, true
			}
		}
		return e, o, 0, false
	}
	e0, o0, next, ok0 := pair(0)
	for ok0 && next < len(hs) && hs[next].ns-o0.ns < apart {
		next++
	}
	e1, o1, _, ok1 := pair(next)
	return e0, o0, e1, o1, ok0 && ok1
}
