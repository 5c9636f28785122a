package remoteid

import (
	"encoding/hex"
	"testing"
)

func benchBytes(b *testing.B, id string) []byte {
	out, err := hex.DecodeString(findVector(b, id).Hex)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// One message per op: the ≥ 5 M messages/s per core target is ns/op ≤ 200.
func BenchmarkDecodeLocation(b *testing.B) {
	msg := benchBytes(b, "loc_typical_airborne")
	var m Message
	b.ReportAllocs()
	b.SetBytes(MessageSize)
	for b.Loop() {
		if err := Decode(msg, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// A mix of all six kinds, one message per op.
func BenchmarkDecodeMixed(b *testing.B) {
	ids := []string{"basic_serial_full_20_chars", "loc_typical_airborne", "auth_p0_uas_id_sig",
		"selfid_text", "system_live_gnss_eu_open_c1", "operator_eu_format"}
	var msgs [][]byte
	for _, id := range ids {
		msgs = append(msgs, benchBytes(b, id))
	}
	var m Message
	b.ReportAllocs()
	b.SetBytes(MessageSize)
	i := 0
	for b.Loop() {
		if err := Decode(msgs[i%len(msgs)], &m); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// A 9-message pack per op (divide ns/op by 9 for per-message cost).
func BenchmarkDecodePack9(b *testing.B) {
	pack := benchBytes(b, "pack_9_msgs_max")
	var p Pack
	b.ReportAllocs()
	b.SetBytes(int64(len(pack)))
	for b.Loop() {
		if err := DecodePack(pack, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeWiFiBeacon(b *testing.B) {
	frame := benchBytes(b, "wifi_beacon_pack5")
	var f Frame
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := DecodeWiFiBeacon(frame, &f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeWiFiNAN(b *testing.B) {
	frame := benchBytes(b, "wifi_nan_action_pack5")
	var f Frame
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeWiFiNAN(frame, &f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeBLE4(b *testing.B) {
	ad := benchBytes(b, "ble4_ad_location")
	var f Frame
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeBLEAdvData(ad, &f); err != nil {
			b.Fatal(err)
		}
	}
}

// Zero allocations on the hot path is a stated property, so it is a test too.
func TestZeroAllocs(t *testing.T) {
	vf := loadVectors(t)
	var m Message
	var p Pack
	var f Frame
	for _, v := range vf.Vectors {
		if !v.Valid {
			continue
		}
		b := mustHex(t, v.Hex)
		var run func()
		switch {
		case singleKinds[v.Kind]:
			run = func() { _ = Decode(b, &m) }
		case v.Kind == "message_pack":
			run = func() { _ = DecodePack(b, &p) }
		default:
			run = func() { _ = DecodeCarrier(CarrierAuto, b, &f) }
		}
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Errorf("%s: %v allocs per decode", v.ID, n)
		}
	}
}
