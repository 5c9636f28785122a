package remoteid_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/cuasd/cuasd/decode/remoteid"
)

// Decode a Location message on the hot path, into a reused struct.
func ExampleDecode() {
	b, _ := hex.DecodeString("122624160a42bf241b6ed1b4b69808ac0870086b54150e0100")
	var m remoteid.Message
	if err := remoteid.Decode(b, &m); err != nil {
		fmt.Println(err)
		return
	}
	lat, lon, _ := m.Location.Position()
	spd, _ := m.Location.SpeedHorizontal()
	fmt.Println(m.Type, m.Version, lat, lon, spd, m.Warnings.Len())
	// Output: location 2 45.539309 -122.966389 5.5 0
}

// Malformed input names the byte at fault; implausible values decode with
// warnings.
func ExampleDecode_errorsAndWarnings() {
	var m remoteid.Message
	bad, _ := hex.DecodeString("72262416fe42bf241b6ed1b4b69808ac0870086b54150e0100")
	fmt.Println(remoteid.Decode(bad, &m))
	odd, _ := hex.DecodeString("12262416feffffff7f6ed1b4b69808ac0870086b54150e0100")
	_ = remoteid.Decode(odd, &m)
	fmt.Println(m.Warnings.List())
	// Output:
	// remoteid: byte 0: message type 0x7 is not defined (0 to 5 and 0xF are)
	// [latitude_out_of_range]
}

// Shape a carrier frame for JSON, with units, names and nulls.
func ExampleNewFrameView() {
	ad, _ := hex.DecodeString("1e16faff0d2a12262416fe42bf241b6ed1b4b69808ac0870086b54150e0100")
	var f remoteid.Frame
	if err := remoteid.DecodeCarrier(remoteid.CarrierAuto, ad, &f); err != nil {
		fmt.Println(err)
		return
	}
	v := remoteid.NewFrameView(&f)
	loc := v.Messages[0].(*remoteid.LocationView)
	out, _ := json.Marshal(map[string]any{"transport": v.Transport, "counter": *v.MessageCounter,
		"status": loc.StatusName, "speed_vertical_mps": loc.SpeedVerticalMps, "altitude_baro_m": *loc.AltitudeBaroM})
	fmt.Println(string(out))
	// Output: {"altitude_baro_m":100,"counter":42,"speed_vertical_mps":-1,"status":"airborne","transport":"bt4"}
}
