package mavlink

import (
	"math"
	"testing"

	"github.com/cuasd/cuasd/decode/remoteid"
)

// TestObserveODIDMessagePack: the Remote ID messages carried in an
// OPEN_DRONE_ID_MESSAGE_PACK reach the observation, encoded by the Remote ID
// encoder (whose output matches opendroneid-core-c's bytes on every
// reference vector).
func TestObserveODIDMessagePack(t *testing.T) {
	var basic, loc [remoteid.MessageSize]byte
	if err := remoteid.EncodeBasicID(&basic, 2, &remoteid.BasicIDData{IDType: 1, UAType: 2, UASID: []byte("1581F5FKD229400B")}); err != nil {
		t.Fatal(err)
	}
	if err := remoteid.EncodeLocation(&loc, 2, &remoteid.LocationData{Status: 2, Direction: 90, SpeedHorizontal: 7,
		Latitude: 52.1, Longitude: 4.2, AltitudeBaro: 80, AltitudeGeo: 120, Height: 80, Timestamp: 100}); err != nil {
		t.Fatal(err)
	}
	def := LookupName("OPEN_DRONE_ID_MESSAGE_PACK")
	payload := make([]byte, def.Len)
	payload[def.Field("single_message_size").Offset] = 25
	payload[def.Field("msg_pack_size").Offset] = 2
	off := def.Field("messages").Offset
	copy(payload[off:], basic[:])
	copy(payload[int(off)+25:], loc[:])
	var m Message
	m.DecodePayload(def, payload)
	o, ok := Observe(&Frame{SysID: 1, CompID: 1, Def: def}, &m, "udp", 7)
	if !ok || o.UASID != "1581F5FKD229400B" || !o.HasPosition || math.Abs(o.Lat-52.1) > 1e-7 || math.Abs(o.Lon-4.2) > 1e-7 ||
		!o.HasVelocity || o.Key != "1-1@udp" {
		t.Fatalf("observation %+v", o)
	}
	payload[def.Field("single_message_size").Offset] = 24
	m.DecodePayload(def, payload)
	o, _ = Observe(&Frame{SysID: 1, CompID: 1, Def: def}, &m, "udp", 7)
	if o.HasPosition || len(o.Warnings) != 1 || o.Warnings[0] != WarnODIDPackInvalid {
		t.Fatalf("a pack with the wrong message size: %+v", o)
	}
}
