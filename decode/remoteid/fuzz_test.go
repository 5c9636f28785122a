package remoteid

import (
	"encoding/json"
	"errors"
	"testing"
)

func checkErr(t *testing.T, err error, n int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Offset < 0 || e.Offset > n || e.Reason == "" {
		t.Fatalf("error %v: offset outside 0..%d or no reason", err, n)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, v := range loadVectors(f).Vectors {
		if len(v.Hex) == 50 {
			f.Add(mustHex(f, v.Hex))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		err := Decode(b, &m)
		if err != nil {
			checkErr(t, err, len(b))
			return
		}
		if _, err := json.Marshal(NewMessageView(&m)); err != nil {
			t.Fatal(err)
		}
		// Decoding is a pure function of the bytes.
		var m2 Message
		if err := Decode(m.Bytes[:], &m2); err != nil || m2.Warnings != m.Warnings || m2.Type != m.Type {
			t.Fatalf("re-decode differs: %v", err)
		}
	})
}

func FuzzDecodePack(f *testing.F) {
	for _, v := range loadVectors(f).Vectors {
		if v.Kind == "message_pack" {
			f.Add(mustHex(f, v.Hex))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Pack
		err := DecodePack(b, &p)
		if err != nil {
			checkErr(t, err, len(b))
			return
		}
		if p.Count < 1 || p.Count > MaxPackMessages || len(b) < 3+25*p.Count {
			t.Fatalf("accepted pack of %d messages from %d bytes", p.Count, len(b))
		}
		for i := 0; i < p.Count; i++ {
			if p.Messages[i].Type > TypeOperatorID {
				t.Fatalf("message %d has type %v", i, p.Messages[i].Type)
			}
		}
		if _, err := json.Marshal(NewPackView(&p)); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzDecodeCarrier(f *testing.F) {
	for _, v := range loadVectors(f).Vectors {
		f.Add(uint8(CarrierAuto), mustHex(f, v.Hex))
	}
	f.Add(uint8(CarrierBLEPDU), mustHex(f, "07f409091c2febea7de0750ee916faff0d0cf2190112262416fe42bf241b6ed1b4b69808ac0870086b54150e0100"))
	f.Fuzz(func(t *testing.T, c uint8, b []byte) {
		carrier := Carrier(c % uint8(len(carrierNames)))
		var fr Frame
		err := DecodeCarrier(carrier, b, &fr)
		if err != nil {
			checkErr(t, err, len(b))
			return
		}
		if fr.Pack.Count < 1 || fr.PayloadOffset < 0 || fr.PayloadOffset >= len(b) {
			t.Fatalf("decoded frame with count %d payload offset %d of %d bytes", fr.Pack.Count, fr.PayloadOffset, len(b))
		}
		if _, err := json.Marshal(NewFrameView(&fr)); err != nil {
			t.Fatal(err)
		}
	})
}
