package droneclaim_test

import (
	"testing"

	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// BenchmarkParseAndPack is the per-message cost of a sensor input: parse a
// DragonSync Remote ID list and re-encode it as an F3411 pack.
func BenchmarkParseAndPack(b *testing.B) {
	msg := []byte(`[{"Basic ID": {"id_type": "Serial Number (ANSI/CTA-2063-A)", "ua_type": 2, "id": "1668EXAMPLE00002", "MAC": "AA:BB:CC:11:22:02", "RSSI": "-71 dBm"}}, {"Location/Vector Message": {"latitude": "51.47233", "longitude": "-0.44810", "geodetic_altitude": "95.0 m", "height_agl": "70.0 m", "speed": "17.75 m/s", "vert_speed": "-0.5 m/s", "direction": "310", "op_status": "Airborne"}}, {"System Message": {"operator_lat": 51.47301, "operator_lon": -0.44702}}]`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		m, err := droneclaim.Parse(msg, droneclaim.KindAuto)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = m.Claim.AppendPack(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
