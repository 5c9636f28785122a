package mavlink_test

import (
	"encoding/hex"
	"fmt"

	"github.com/cuasd/cuasd/decode/mavlink"
)

// Parse a byte stream with garbage in front of a MAVLink 1 HEARTBEAT and
// decode its fields.
func ExampleParser() {
	in, _ := hex.DecodeString("0102fe0900010100050000000203510403c641")
	var p mavlink.Parser
	p.Reset(in)
	var m mavlink.Message
	for {
		f, ok := p.Next()
		if !ok {
			break
		}
		m.Decode(&f)
		fmt.Printf("v%d %s from %d/%d at offset %d: %s\n", f.Version, f.Name(), f.SysID, f.CompID, f.Offset, m.AppendJSON(nil))
		v, _ := mavlink.VehicleStatus(&m)
		fmt.Println(v.TypeName, v.ModeName, "armed:", v.Armed)
	}
	fmt.Printf("%+v\n", p.Stats())
	// Output:
	// v1 HEARTBEAT from 1/1 at offset 2: {"type":2,"autopilot":3,"base_mode":81,"custom_mode":5,"system_status":4,"mavlink_version":3}
	// MAV_TYPE_QUADROTOR LOITER armed: false
	// {Frames:1 Unknown:0 BadCRC:0 BadSignature:0 HeaderErrors:0 SkippedBytes:2 IncompleteAtEnd:false}
}

// Parse a whole input the way POST /v1/mavlink/parse does.
func ExampleParse() {
	in, _ := hex.DecodeString("fe0964010100050000000203510403afab")
	res, _ := mavlink.Parse(in, mavlink.Options{})
	if res.Stats.Frames == 0 {
		fmt.Println(res.NoFrameDetail(len(in)))
	}
	// Output:
	// no valid MAVLink frame in 17 bytes: bad CRC at offset 0 (v1 msgid 0 HEARTBEAT, payload 9 bytes)
}
