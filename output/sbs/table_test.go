package sbs

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/decode/worker"
)

// TestAircraftTableMatchesAMap: the encoder's aircraft table against a
// Go map through random inserts, look-ups of held and absent addresses
// and forgets, growing from empty far past its first size: address 0,
// the largest address and addresses that share a first slot (probing
// past each other) are keys like any, every aircraft keeps its own state
// through growth and the rebuilds of forget, and a forgotten address is
// gone.
func TestAircraftTableMatchesAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	var tb aircraftTable
	model := map[uint32]uint32{} // address: the fixLon stamp its aircraft holds
	addrs := []uint32{0, 0xFFFFFFFF, 0xFFFFFF}
	// Addresses sharing a home slot in a table of minSlots slots.
	probe := aircraftTable{shift: 32 - 6}
	for a := uint32(1); len(addrs) < 12; a++ {
		if probe.home(a) == probe.home(0) {
			addrs = append(addrs, a)
		}
	}
	for range 5000 {
		addrs = append(addrs, r.Uint32N(1<<24))
	}
	check := func(when string) {
		t.Helper()
		if tb.len() != len(model) {
			t.Fatalf("%s: %d aircraft, want %d", when, tb.len(), len(model))
		}
		for _, a := range addrs {
			ac := tb.find(a)
			stamp, ok := model[a]
			switch {
			case ok && ac == nil:
				t.Fatalf("%s: %06X not found", when, a)
			case !ok && ac != nil:
				t.Fatalf("%s: %06X found, never inserted or forgotten", when, a)
			case ok && ac.fixLon != float64(stamp):
				t.Fatalf("%s: %06X holds %v, want %d: another aircraft's state", when, a, ac.fixLon, stamp)
			}
		}
	}
	check("empty")
	stamp := uint32(0)
	for round := range 8 {
		// Insert some of the addresses (the first ones, address 0 and the
		// colliding ones, in every round they are not held).
		for i, a := range addrs {
			if _, held := model[a]; held || i >= 12 && r.IntN(3) != 0 {
				continue
			}
			stamp++
			tb.insert(a).fixLon = float64(stamp)
			model[a] = stamp
		}
		check("after inserts")
		// Forget about half, the decision by each aircraft's own state.
		odd := round%2 == 1
		tb.forget(func(ac *msgAircraft) bool { return (uint32(ac.fixLon)%2 == 1) == odd })
		for a, s := range model {
			if (s%2 == 1) == odd {
				delete(model, a)
			}
		}
		check("after forget")
	}
	if len(tb.slots) <= minSlots {
		t.Fatalf("the index never grew: %d slots", len(tb.slots))
	}
}

// TestSweepForgetsOnTheFramesClock: the encoder forgets an aircraft
// whose squitters stopped more than two minutes before the newest frame
// (at its once-a-minute sweep) and keeps one heard since.
func TestSweepForgetsOnTheFramesClock(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	batch := func(at time.Duration, addrs ...uint32) *worker.ModeSBatch {
		bt := &worker.ModeSBatch{Meta: &worker.Meta{}}
		for _, a := range addrs {
			bt.Frames = append(bt.Frames, worker.ModeSFrame{
				At:  sensorclock.Time{UnixNano: t0.Add(at).UnixNano()},
				Msg: adsb.Message{DF: 11, CRC: adsb.CRCValid, Address: a, AddressType: adsb.AddrModeS},
			})
		}
		return bt
	}
	var e MessageEncoder
	e.TrackDecoded(batch(0, 0xA, 0xB))
	e.TrackDecoded(batch(90*time.Second, 0xB)) // a sweep: both heard within two minutes
	if e.ac.find(0xA) == nil || e.ac.find(0xB) == nil {
		t.Fatal("an aircraft heard 90 s before was forgotten")
	}
	e.TrackDecoded(batch(150*time.Second, 0xC)) // a sweep: A heard 150 s before
	if e.ac.find(0xA) != nil {
		t.Error("0000A, not heard for 150 s, is still held")
	}
	if e.ac.find(0xB) == nil || e.ac.find(0xC) == nil {
		t.Error("an aircraft heard within two minutes was forgotten")
	}
	if e.ac.len() != 2 {
		t.Errorf("%d aircraft held, want 2", e.ac.len())
	}
}

// TestMsgAircraftIsTwoCacheLines: an aircraft's state stays 128 bytes, as
// its doc comment says (what one look-up touches).
func TestMsgAircraftIsTwoCacheLines(t *testing.T) {
	if n := unsafe.Sizeof(msgAircraft{}); n != 128 {
		t.Fatalf("msgAircraft is %d bytes, want 128", n)
	}
}
