package sbs

// aircraftTable is the message encoder's aircraft state by ICAO address:
// per-message SBS looks an aircraft up for every message (~50,000 a
// second at the pipeline benchmark's rate, 2,000 aircraft interleaved),
// and a Go map of pointers costs a cache miss or two in the map and
// another in the pointed-to aircraft (issue 30's pipeline profile). Here
// an open-addressing index (a power of two of slots, linear probing,
// at most half full) holds each address beside its aircraft's place in
// a dense slice of the aircraft themselves, two cache lines each: a
// look-up touches one line of the index and the aircraft's own.
//
// Nothing is deleted from the index: forget drops aircraft by rebuilding
// it and compacting the slice, once a minute (the encoder's sweep). Any
// uint32 is a key, 0 too. The zero table is empty and ready.
type aircraftTable struct {
	// slots is the index; a slot's pos is the aircraft's place in ac plus
	// one, 0 for an empty slot.
	slots []slot
	// shift is 32 less the log2 of len(slots).
	shift uint8
	// ac and addr are the aircraft and their addresses, in the same order.
	ac   []msgAircraft
	addr []uint32
}

type slot struct {
	addr uint32
	pos  uint32
}

// minSlots is the index's size for the first aircraft.
const minSlots = 64

// home is addr's first slot: Fibonacci hashing, the top bits of addr
// times 2^32/φ, so that addresses assigned in blocks spread out.
func (t *aircraftTable) home(addr uint32) uint32 {
	return (addr * 0x9E3779B9) >> t.shift
}

// find is the aircraft of addr, nil when the table has none.
func (t *aircraftTable) find(addr uint32) *msgAircraft {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint32(len(t.slots) - 1)
	for i := t.home(addr); ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.pos == 0 {
			return nil
		}
		if s.addr == addr {
			return &t.ac[s.pos-1]
		}
	}
}

// insert adds addr's aircraft, zero, which the table must not hold yet,
// and returns it. The pointer is valid until the next insert or forget.
func (t *aircraftTable) insert(addr uint32) *msgAircraft {
	if 2*(len(t.ac)+1) > len(t.slots) {
		t.rehash(max(minSlots, 2*len(t.slots)))
	}
	t.ac = append(t.ac, msgAircraft{})
	t.addr = append(t.addr, addr)
	t.place(addr, uint32(len(t.ac)))
	return &t.ac[len(t.ac)-1]
}

// place puts addr with pos in its first free slot.
func (t *aircraftTable) place(addr, pos uint32) {
	mask := uint32(len(t.slots) - 1)
	i := t.home(addr)
	for t.slots[i].pos != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = slot{addr: addr, pos: pos}
}

// rehash rebuilds the index for the aircraft held, with n slots (a power
// of two, more than twice as many as the aircraft).
func (t *aircraftTable) rehash(n int) {
	if n != len(t.slots) {
		t.slots = make([]slot, n)
		t.shift = uint8(32)
		for m := n; m > 1; m >>= 1 {
			t.shift--
		}
	} else {
		clear(t.slots)
	}
	for i, a := range t.addr {
		t.place(a, uint32(i+1))
	}
}

// forget drops the aircraft gone reports true of, keeping the others'
// state and their order, and rebuilds the index when any was dropped.
func (t *aircraftTable) forget(gone func(*msgAircraft) bool) {
	n := 0
	for i := range t.ac {
		if gone(&t.ac[i]) {
			continue
		}
		t.ac[n], t.addr[n] = t.ac[i], t.addr[i]
		n++
	}
	if n == len(t.ac) {
		return
	}
	clear(t.ac[n:]) // nothing of a forgotten aircraft is read again
	t.ac, t.addr = t.ac[:n], t.addr[:n]
	t.rehash(len(t.slots))
}

// len is the number of aircraft held.
func (t *aircraftTable) len() int { return len(t.ac) }
