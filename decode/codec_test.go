package decode

import (
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/cuasd/cuasd/decode/sensorclock"
)

func sampleObs() Observation {
	return Observation{
		Protocol: ADSB, Key: "406B90", Sensor: "rx1", TimeUnixNano: 1700000000123456789, IngestUnixNano: 42,
		ICAO: "406B90", Callsign: "EZY85MH", Category: "A3", CategoryKind: CategoryEmitter, HasPosition: true, Lat: 52.2572, Lon: 3.91937,
		PositionMethod: "cpr_global", HasAltitude: true, AltM: 11277.6, AltKind: "baro", HasVelocity: true,
		SpeedMps: 81.9, HeadingDeg: 182.88, VRateMps: -4.7, HasCPR: true, CPROdd: true, CPRLat: 93000, CPRLon: 51372,
		Squawk: "7700", Emergency: "general", Warnings: []string{"a", "bb"}, SystemID: 1, ComponentID: 2,
		HasOperatorPosition: true, OperatorLat: -1, OperatorLon: 2, UASID: "1596F", OperatorID: "FIN87", ModeSReply: true,
		Transmitter: "AA:BB:CC:DD:EE:FF", HasCommB: true, CommB: 0xFFBAA11E200472,
	}
}

func TestCodecRoundTrip(t *testing.T) {
	withSignal := sampleObs()
	withSignal.Signal = -71
	simulated := sampleObs()
	simulated.Simulated = true // issue 34
	for _, in := range []Observation{sampleObs(), simulated, {}, {Protocol: RemoteID, Key: "x"},
		{Protocol: MAVLink, Category: "MAV_TYPE_QUADROTOR", CategoryKind: CategoryMAVType},
		{Protocol: RemoteID, Category: "Helicopter (or Multirotor)", CategoryKind: CategoryUAType}, withSignal} {
		var out Observation
		if err := out.UnmarshalBinary(in.AppendBinary(nil)); err != nil {
			t.Fatal(err)
		}
		if len(in.Warnings) == 0 {
			in.Warnings = nil
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("round trip:\n in  %+v\n out %+v", in, out)
		}
	}
}

// TestCodecReadsVersion3: records written before Comm-B (version 3: the
// same layout without the trailing MB field) still decode, with a stray
// Comm-B flag bit ignored rather than read as a field that is not there.
func TestCodecReadsVersion3(t *testing.T) {
	in := sampleObs()
	in.HasCommB, in.CommB = false, 0
	b := in.AppendBinary(nil)
	if b[0] != 4 {
		t.Fatalf("version byte %d, want 4", b[0])
	}
	b[0] = 3
	var out Observation
	if err := out.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("version 3 record: %v\n in  %+v\n out %+v", err, in, out)
	}
	b[1+1] |= flCommB >> 8 // the flags are little endian from byte 1
	if err := out.UnmarshalBinary(b); err != nil || out.HasCommB {
		t.Fatalf("version 3 record with the Comm-B bit: %v, HasCommB %v", err, out.HasCommB)
	}
	b[0] = 2
	if err := out.UnmarshalBinary(b); err == nil {
		t.Fatal("version 2 accepted")
	}
}

func TestCodecRejectsTruncation(t *testing.T) {
	o := sampleObs()
	b := o.AppendBinary(nil)
	for i := 0; i < len(b); i++ {
		var out Observation
		if err := out.UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("truncated at %d accepted", i)
		}
	}
	var out Observation
	if err := out.UnmarshalBinary(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

// TestCodecSignal: a signal level costs 8 bytes, flagged, only when there
// is one; a record cut inside it is refused.
func TestCodecSignal(t *testing.T) {
	o := sampleObs()
	without := o.AppendBinary(nil)
	o.Signal = -63.5
	with := o.AppendBinary(nil)
	if len(with) != len(without)+8 || with[0] != without[0] {
		t.Fatalf("without % x\nwith    % x", without[:6], with[:6])
	}
	var out Observation
	if err := out.UnmarshalBinary(with[:len(with)-1]); err == nil {
		t.Fatal("truncated signal accepted")
	}
}

// TestCodecProduct (issue 25): the product claim is a flagged trailer, so
// a record without one is byte for byte what the previous cuasd wrote
// (and reads as before), and one with it round-trips.
func TestCodecProduct(t *testing.T) {
	o := sampleObs()
	o.Signal = -76
	without := o.AppendBinary(nil)
	if without[1+3]&(flProduct>>24) != 0 {
		t.Fatal("product flag set without a product claim")
	}
	o.Description, o.ProductType = "DJI Mavic 3", 68
	with := o.AppendBinary(nil)
	if len(with) != len(without)+2+2+len("DJI Mavic 3") || with[0] != without[0] {
		t.Fatalf("with a product %d bytes, without %d", len(with), len(without))
	}
	var out Observation
	if err := out.UnmarshalBinary(with); err != nil || out.Description != "DJI Mavic 3" || out.ProductType != 68 || out.Signal != -76 {
		t.Fatalf("%v: %q %d %v", err, out.Description, out.ProductType, out.Signal)
	}
	if err := out.UnmarshalBinary(without); err != nil || out.Description != "" || out.ProductType != 0 {
		t.Fatalf("older record: %v %q %d", err, out.Description, out.ProductType)
	}
	for _, cut := range []int{1, 2, 3} {
		if err := out.UnmarshalBinary(with[:len(with)-cut*4+3]); err == nil {
			t.Fatalf("product trailer cut by %d accepted", cut*4-3)
		}
	}
}

func TestBatch(t *testing.T) {
	a, c := sampleObs(), Observation{Protocol: MAVLink, Key: "1-1@udp"}
	b := c.AppendBatch(a.AppendBatch(nil))
	var keys []string
	if err := EachInBatch(b, func(o *Observation) error { keys = append(keys, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keys, []string{"406B90", "1-1@udp"}) {
		t.Fatal(keys)
	}
	if err := EachInBatch(b[:len(b)-1], func(*Observation) error { return nil }); err == nil {
		t.Fatal("truncated batch accepted")
	}
}

func FuzzObservationCodec(f *testing.F) {
	o := sampleObs()
	f.Add(o.AppendBinary(nil))
	q := withADSBInfo()
	f.Add(q.AppendBinary(nil))
	f.Add([]byte{codecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var out Observation
		if out.UnmarshalBinary(b) == nil {
			// What decodes re-encodes to a canonical form (unused flag bits
			// dropped) that is a fixed point. Bytes, not DeepEqual: a NaN
			// float is never equal to itself.
			got := out.AppendBinary(nil)
			var again Observation
			if err := again.UnmarshalBinary(got); err != nil {
				t.Fatalf("canonical form does not decode: %v", err)
			}
			if string(again.AppendBinary(nil)) != string(got) {
				t.Fatalf("unstable round trip")
			}
		}
	})
}

func BenchmarkObservationEncode(b *testing.B) {
	o := sampleObs()
	o.Warnings = nil
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = o.AppendBinary(buf[:0])
	}
}

// withADSBInfo is sampleObs with every value of the issue 21 block set.
func withADSBInfo() Observation {
	o := sampleObs()
	o.AddrType, o.AirGround, o.PosTypeCode, o.NICB = 2, AirGroundGround, 11, true
	o.HasVersion, o.Version = true, 2
	o.HasNICA, o.NICA, o.HasNICC, o.NICC = true, true, true, false
	o.HasNACv, o.NACv, o.HasSIL, o.SIL, o.SILType = true, 1, true, 3, SILPerSample
	o.HasNavHeading, o.NavHeadingDeg = true, 246.796875
	return o
}

// TestCodecADSBInfo: the issue 21 block round-trips, costs 17 bytes only
// when set (other protocols pay nothing), a record cut inside it is
// refused, and a record written before it (no flag) reads with the block
// absent.
func TestCodecADSBInfo(t *testing.T) {
	in := withADSBInfo()
	with := in.AppendBinary(nil)
	var out Observation
	if err := out.UnmarshalBinary(with); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %v\n in  %+v\n out %+v", err, in, out)
	}
	plain := sampleObs()
	without := plain.AppendBinary(nil)
	if len(with) != len(without)+17 || with[0] != without[0] || with[0] != 4 {
		t.Fatalf("block costs %d bytes, version %d/%d", len(with)-len(without), with[0], without[0])
	}
	if err := out.UnmarshalBinary(with[:len(with)-1]); err == nil {
		t.Fatal("truncated block accepted")
	}
	// Each presence bit is its own: a block with only the version.
	only := Observation{Protocol: ADSB, Key: "4CA1FA", HasVersion: true}
	if err := out.UnmarshalBinary(only.AppendBinary(nil)); err != nil || !out.HasVersion || out.Version != 0 || out.HasSIL || out.HasNICA {
		t.Fatalf("version 0 only: %v %+v", err, out)
	}
	if err := out.UnmarshalBinary(without); err != nil || out.HasADSBInfo() {
		t.Fatalf("record without the block: %v, block %v", err, out.HasADSBInfo())
	}
}

// TestCodecProductAndADSBInfo: the two optional tails of issues 25 and 21
// have flags of their own and follow each other in one record.
func TestCodecProductAndADSBInfo(t *testing.T) {
	if flProduct&flADSBInfo != 0 || flProduct&(flCatMask|flSignal|flCommB) != 0 || flADSBInfo&(flCatMask|flSignal|flCommB) != 0 {
		t.Fatalf("flags overlap: product %#x, ADS-B block %#x", flProduct, flADSBInfo)
	}
	in := withADSBInfo()
	in.Signal, in.Description, in.ProductType = -60, "DJI Mavic 3", 68
	var out Observation
	if err := out.UnmarshalBinary(in.AppendBinary(nil)); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %v\n in  %+v\n out %+v", err, in, out)
	}
}

// TestCodecSensorTime: the issue 30 tail (sensor time, raw timestamp,
// time source) follows the others and round-trips; a record without it
// reads with none.
func TestCodecSensorTime(t *testing.T) {
	in := withADSBInfo()
	in.Signal, in.Description, in.ProductType = -60, "DJI Mavic 3", 68
	in.SensorNs, in.SensorTicks, in.TimeSource = 123_456_789_012, 0xABCDEF012345, sensorclock.FromReceiver
	var out Observation
	if err := out.UnmarshalBinary(in.AppendBinary(nil)); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %v\n in  %+v\n out %+v", err, in, out)
	}
	in.SensorNs, in.SensorTicks, in.TimeSource = 0, 0, sensorclock.Arrival
	b := in.AppendBinary(nil)
	if fl := binary.LittleEndian.Uint32(b[1:]); fl&flSensorTime != 0 {
		t.Fatal("flag set without a sensor time")
	}
	if err := out.UnmarshalBinary(b); err != nil || out.SensorNs != 0 || out.TimeSource != sensorclock.Arrival {
		t.Fatalf("without: %v %+v", err, out)
	}
}
