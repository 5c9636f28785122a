package droneclaim_test

import (
	"fmt"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// A DragonSync Remote ID message, with numbers as strings with units,
// becomes a claim, and the claim an F3411 pack that cuasd's Remote ID
// decoder reads like any captured frame.
func ExampleParse() {
	msg := []byte(`[{"Basic ID": {"id": "1668EXAMPLE00002", "ua_type": 2, "RSSI": "-71 dBm"}},
		{"Location/Vector Message": {"latitude": "51.47233", "longitude": "-0.44810", "speed": "17.75 m/s"}},
		{"System Message": {"operator_lat": 51.47301, "operator_lon": -0.44702}}]`)
	m, err := droneclaim.Parse(msg, droneclaim.KindAuto)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Kind, m.Claim.ID, m.Claim.RSSI, m.Claim.SpeedMps)
	pack, _ := m.Claim.AppendPack(nil)
	var f remoteid.Frame
	_ = remoteid.DecodeCarrier(remoteid.CarrierPack, pack, &f)
	o := remoteid.FrameObservation(&f, 0, "kit-1")
	fmt.Printf("%s %.5f,%.5f operator %.5f,%.5f\n", o.Key, o.Lat, o.Lon, o.OperatorLat, o.OperatorLon)

	_, err = droneclaim.Parse([]byte(`{"id": "X1", "lat": 91, "lon": 0}`), droneclaim.KindAuto)
	fmt.Println(droneclaim.ReasonOf(err), err)
	// Output:
	// remoteid 1668EXAMPLE00002 -71 17.75
	// 1668EXAMPLE00002 51.47233,-0.44810 operator 51.47301,-0.44702
	// range droneclaim: range (lat): value outside the plausible range
}
