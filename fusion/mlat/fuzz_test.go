package mlat

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzSolve: any receptions (positions around a point, times, sigmas,
// altitude) never panic the solver or the verifier, and an accepted fix
// is finite with an error estimate within the configured limit.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40}, 9000.0, 150.0)
	f.Add(make([]byte, 64), 0.0, 0.0)
	f.Fuzz(func(t *testing.T, data []byte, alt, altSigma float64) {
		sv := NewSolver(SolverConfig{})
		p := Problem{Alt: alt, AltSigma: altSigma}
		for len(data) >= 8 && len(p.M) < MaxReceptions+2 {
			v := binary.LittleEndian.Uint64(data)
			data = data[8:]
			lat := 47 + float64(int8(v))/100
			lon := 8 + float64(int8(v>>8))/100
			h := float64(uint16(v>>16)) / 10
			tt := float64(int32(v>>32)) * 1e-12
			p.M = append(p.M, Measurement{Sensor: ECEF(lat, lon, h), T: tt, Sigma: float64(uint8(v>>56)) * 1e-9})
		}
		var fix Fix
		if err := sv.Solve(&p, &fix); err == nil {
			for _, x := range []float64{fix.Lat, fix.Lon, fix.Alt, fix.ErrorM, fix.ResidualM, fix.GDOP} {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("accepted fix with a non-finite value: %+v", fix)
				}
			}
			if fix.ErrorM > sv.Config().MaxErrorM {
				t.Fatalf("accepted fix with error %v over the limit", fix.ErrorM)
			}
		} else if _, ok := err.(Reason); !ok {
			t.Fatalf("error %v is not a Reason", err)
		}
		var v Verification
		sv.Verify(&p, ECEF(47, 8, 9000), VerifyConfig{}, &v)
		if v.Status == Contradicted && (math.IsNaN(v.DistanceM) || v.Reason != ReasonNone) {
			t.Fatalf("contradicted without a finite distance: %+v", v)
		}
	})
}
