package worker

import (
	"testing"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/remoteid"
)

// TestDJI: a relayed DroneID pack becomes a dji observation keyed by the
// serial, with the pilot as the operator; a broken pack is an error.
func TestDJI(t *testing.T) {
	var basic, loc, sys [remoteid.MessageSize]byte
	if err := remoteid.EncodeBasicID(&basic, 2, &remoteid.BasicIDData{IDType: 1, UAType: 2, UASID: []byte("3NZEXAMPLEDJI003")}); err != nil {
		t.Fatal(err)
	}
	if err := remoteid.EncodeLocation(&loc, 2, &remoteid.LocationData{Status: 2, Latitude: 51.46811, Longitude: -0.46022,
		Direction: 45, SpeedHorizontal: 7, SpeedVertical: 0, AltitudeBaro: -1000, AltitudeGeo: 60, Height: 35,
		Timestamp: remoteid.TimestampUnknown}); err != nil {
		t.Fatal(err)
	}
	if err := remoteid.EncodeSystem(&sys, 2, &remoteid.SystemData{OperatorLatitude: 51.4679, OperatorLongitude: -0.46101,
		AreaCeiling: -1000, AreaFloor: -1000, OperatorAltitudeGeo: -1000}); err != nil {
		t.Fatal(err)
	}
	pack, err := remoteid.AppendPack(nil, 2, basic, loc, sys)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDJI()
	out, err := d.Decode(pack, Meta{Sensor: "kit"}, nil)
	if err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
	o := out[0]
	if o.Protocol != decode.DJI || o.Key != "3NZEXAMPLEDJI003" || o.PositionMethod != "dji_droneid" ||
		o.Lat != 51.46811 || !o.HasOperatorPosition || o.OperatorLat != 51.4679 || o.Sensor != "kit" {
		t.Errorf("%+v", o)
	}
	if o.Description != "" || o.ProductType != 0 {
		t.Errorf("product claim without a Self-ID: %q %d", o.Description, o.ProductType)
	}
	if _, err := d.Decode(pack[:30], Meta{}, nil); err == nil {
		t.Error("truncated pack accepted")
	}
	if decode.DJI.TrackPrefix() != "dji:" {
		t.Errorf("prefix %q", decode.DJI.TrackPrefix())
	}
}

// TestDJIProductClaim (issue 25): the Self-ID text of a relayed pack and
// the Cuas-Product-Type header reach the observation as the product claim.
func TestDJIProductClaim(t *testing.T) {
	var basic, self [remoteid.MessageSize]byte
	if err := remoteid.EncodeBasicID(&basic, 2, &remoteid.BasicIDData{IDType: 1, UAType: 2, UASID: []byte("3NZEXAMPLEDJI003")}); err != nil {
		t.Fatal(err)
	}
	if err := remoteid.EncodeSelfID(&self, 2, &remoteid.SelfIDData{Desc: "DJI Mavic 3"}); err != nil {
		t.Fatal(err)
	}
	pack, err := remoteid.AppendPack(nil, 2, basic, self)
	if err != nil {
		t.Fatal(err)
	}
	md := msgDecoder{dec: NewDJI()}
	md.decodeMessage("raw", pack, Meta{Sensor: "kit", RecvUnixNano: 1, ProductType: 68}, NewMetrics(nil))
	if len(md.obs) != 1 || md.obs[0].Description != "DJI Mavic 3" || md.obs[0].ProductType != 68 {
		t.Fatalf("observations %+v, dead %+v", md.obs, md.dead)
	}
}

// BenchmarkDJIDecode: one relayed DroneID pack (Basic ID, Location, Self-ID
// "DJI Mavic 3") decoded into an observation, as a kit repeats it.
func BenchmarkDJIDecode(b *testing.B) {
	var basic, loc, self [remoteid.MessageSize]byte
	_ = remoteid.EncodeBasicID(&basic, 2, &remoteid.BasicIDData{IDType: 1, UAType: 2, UASID: []byte("3NZEXAMPLEDJI003")})
	_ = remoteid.EncodeLocation(&loc, 2, &remoteid.LocationData{Status: 2, Latitude: 51.46811, Longitude: -0.46022,
		Direction: 45, SpeedHorizontal: 7, AltitudeBaro: -1000, AltitudeGeo: 60, Height: 35, Timestamp: remoteid.TimestampUnknown})
	_ = remoteid.EncodeSelfID(&self, 2, &remoteid.SelfIDData{Desc: "DJI Mavic 3"})
	pack, err := remoteid.AppendPack(nil, 2, basic, loc, self)
	if err != nil {
		b.Fatal(err)
	}
	d := NewDJI()
	out := make([]decode.Observation, 0, 1)
	b.ReportAllocs()
	for b.Loop() {
		out, _ = d.Decode(pack, Meta{Sensor: "kit", RecvUnixNano: 1}, out[:0])
	}
}
