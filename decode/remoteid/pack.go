package remoteid

import "math"

// MaxPackMessages is the most messages a message pack may hold.
const MaxPackMessages = 9

// MaxOperatorDistanceM is the aircraft-to-operator distance beyond which a
// pack is flagged [WarnOperatorFarFromAircraft]. Broadcast Remote ID is heard
// over a few kilometres at most and operators of broadcast-only aircraft fly
// within visual line of sight, so 50 km apart is implausible rather than
// merely unusual.
const MaxOperatorDistanceM = 50_000

// Pack is a decoded message pack (type 0xF), or, when a carrier held a single
// message, a pack of one.
type Pack struct {
	Version  uint8
	Count    int
	Messages [MaxPackMessages]Message
	// Warnings are pack-level findings (duplicates, version mismatch,
	// operator far from aircraft); each message keeps its own too.
	Warnings Warnings
}

// AllWarnings returns the union of the pack's and its messages' warnings.
func (p *Pack) AllWarnings() Warnings {
	w := p.Warnings
	for i := 0; i < p.Count; i++ {
		w |= p.Messages[i].Warnings
	}
	return w
}

// DecodePack decodes a message pack: header byte 0xF<version>, single message
// size (must be 25), message count (1..9), then count messages. Bytes after
// the last message are ignored, because real Bluetooth 5 transmitters pad the
// pack to a fixed length. Any message that fails to decode, including a
// nested pack, fails the whole pack. Allocates nothing on success.
func DecodePack(b []byte, p *Pack) error {
	if len(b) < 3 {
		return errAt(len(b), "message pack length %d, want at least 3 header bytes", len(b))
	}
	if MessageType(b[0]>>4) != TypePack {
		return errAt(0, "message type 0x%X is not a message pack (0xF)", b[0]>>4)
	}
	v := b[0] & 0x0F
	if v > MaxVersion {
		return errAt(0, "protocol version %d is not defined (0, 1 and 2 are)", v)
	}
	if b[1] != MessageSize {
		return errAt(1, "message pack single message size %d, want 25", b[1])
	}
	n := int(b[2])
	if n == 0 || n > MaxPackMessages {
		return errAt(2, "message pack count %d, want 1 to 9", n)
	}
	if need := 3 + n*MessageSize; len(b) < need {
		return errAt(len(b), "message pack of %d messages needs %d bytes, got %d", n, need, len(b))
	}
	p.Version = v
	p.Count = n
	p.Warnings = 0
	if v < Version2 {
		p.Warnings.add(WarnLegacyVersion)
	}
	for i := 0; i < n; i++ {
		off := 3 + i*MessageSize
		m := &p.Messages[i]
		if err := Decode(b[off:off+MessageSize], m); err != nil {
			return rebase(err, off)
		}
		if m.Version != v {
			p.Warnings.add(WarnPackVersionMismatch)
		}
	}
	p.checkContent()
	return nil
}

// checkContent applies F3411's limits on what one pack may hold and the
// cross-message plausibility check between aircraft and operator positions.
func (p *Pack) checkContent() {
	loc, sys := p.checkDuplicates()
	if loc != nil && sys != nil && loc.PositionValid() && sys.OperatorPositionValid() {
		lat1, lon1, _ := loc.Position()
		lat2, lon2, _ := sys.OperatorPosition()
		if HaversineM(lat1, lon1, lat2, lon2) > MaxOperatorDistanceM {
			p.Warnings.add(WarnOperatorFarFromAircraft)
		}
	}
}

// checkDuplicates warns of a message type held more often than F3411
// allows (two Basic IDs, one of each other type but Auth, each Auth page
// once) and returns the pack's Location and System messages, if any.
func (p *Pack) checkDuplicates() (loc *Location, sys *System) {
	var count [6]int
	var authPages uint16
	for i := 0; i < p.Count; i++ {
		m := &p.Messages[i]
		count[m.Type]++
		switch m.Type {
		case TypeAuth:
			bit := uint16(1) << m.Auth.Page
			if authPages&bit != 0 {
				p.Warnings.add(WarnDuplicateMessage)
			}
			authPages |= bit
		case TypeLocation:
			loc = &m.Location
		case TypeSystem:
			sys = &m.System
		}
	}
	if count[TypeBasicID] > 2 || count[TypeLocation] > 1 || count[TypeSelfID] > 1 ||
		count[TypeSystem] > 1 || count[TypeOperatorID] > 1 {
		p.Warnings.add(WarnDuplicateMessage)
	}
	return loc, sys
}

// HaversineM returns the great-circle distance in metres between two points
// given in degrees, on a sphere of the mean Earth radius.
func HaversineM(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371008.8
	const rad = math.Pi / 180
	dlat := (lat2 - lat1) * rad
	dlon := (lon2 - lon1) * rad
	s1 := math.Sin(dlat / 2)
	s2 := math.Sin(dlon / 2)
	a := s1*s1 + math.Cos(lat1*rad)*math.Cos(lat2*rad)*s2*s2
	return 2 * r * math.Asin(math.Sqrt(math.Min(1, a)))
}
