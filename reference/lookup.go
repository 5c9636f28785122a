package reference

import "math/bits"

// setCapacity is how many records a Set can hold.
const setCapacity = 128

// Set is a set of database records, by position, as a fixed-size bitset:
// lookups combine criteria by intersection without allocating.
type Set [setCapacity / 64]uint64

func (s *Set) add(i int)     { s[i/64] |= 1 << (i % 64) }
func (s Set) with(i int) Set { s.add(i); return s }
func (s Set) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s Set) and(o Set) (r Set) {
	for i := range s {
		r[i] = s[i] & o[i]
	}
	return r
}

// Len returns the number of records in the set.
func (s Set) Len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// Query is what a broadcast claims about an object. Zero values mean
// "not claimed": UAType and MAVType use -1 for absent because 0 is a real
// value of both enumerations (none / generic) that narrows nothing.
type Query struct {
	// SerialNumber is a Remote ID serial number (ID type 1) or just its
	// 4-character ANSI/CTA-2063-A manufacturer code.
	SerialNumber string
	// UAType is the ASTM F3411 UA type from a Basic ID message, or -1.
	UAType int
	// EmitterCategory is the ADS-B emitter category, e.g. "B6", or "".
	EmitterCategory string
	// MAVType is the MAV_TYPE from a MAVLink HEARTBEAT, or -1.
	MAVType int
	// ProductID is the id of the record a product claim names (issue 25:
	// ProductMatch.ID of MatchProduct), or "".
	ProductID string
}

// NewQuery returns a Query that claims nothing.
func NewQuery() Query { return Query{UAType: -1, MAVType: -1} }

// Match is the answer of Lookup.
type Match struct {
	// Candidates are the records consistent with every claim given.
	Candidates Set
	// Side is the side all candidates share, or SideUnknown when they
	// disagree or there are none.
	Side Side
	// Matched counts the claims that narrowed the search (a claim whose
	// value no record carries is counted and empties the set).
	Matched int
}

// Lookup returns the records consistent with the claims in q and the side
// they share. The claims are unauthenticated broadcast fields, so the
// answer is a set of candidates, never an identification; a query with no
// usable claim matches nothing. Lookup does not allocate.
func (db *DB) Lookup(q Query) Match {
	s := db.all
	n := 0
	if len(q.SerialNumber) >= 4 {
		s = s.and(db.bySerial[q.SerialNumber[:4]])
		n++
	}
	if q.UAType >= 0 && q.UAType != 0 { // 0 = "none declared"
		s = s.and(db.byUAType[q.UAType])
		n++
	}
	if q.EmitterCategory != "" {
		s = s.and(db.byEmitter[q.EmitterCategory])
		n++
	}
	if q.MAVType >= 0 && q.MAVType != 0 { // 0 = MAV_TYPE_GENERIC
		s = s.and(db.byMAVType[q.MAVType])
		n++
	}
	if q.ProductID != "" {
		var one Set
		if i, ok := db.byID[q.ProductID]; ok {
			one.add(i)
		}
		s = s.and(one)
		n++
	}
	if n == 0 {
		return Match{Side: SideUnknown}
	}
	return Match{Candidates: s, Side: db.sideOf(s), Matched: n}
}

// sideOf returns the side shared by every record in s.
func (db *DB) sideOf(s Set) Side {
	if s.Len() == 0 {
		return SideUnknown
	}
	for _, side := range Sides {
		if s.and(db.sideOfSet[side]) == s {
			return side
		}
	}
	return SideUnknown
}

// Each calls fn for every record in s, in file order, until fn returns
// false.
func (db *DB) Each(s Set, fn func(Drone) bool) {
	for i := range db.drones {
		if s.has(i) && !fn(db.drones[i]) {
			return
		}
	}
}

// Candidates returns the records of a Match as a slice (this allocates).
func (db *DB) Candidates(m Match) []Drone {
	out := make([]Drone, 0, m.Candidates.Len())
	db.Each(m.Candidates, func(d Drone) bool { out = append(out, d); return true })
	return out
}
