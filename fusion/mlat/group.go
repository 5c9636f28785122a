package mlat

// MaxMsgLen is the longest Mode S message (112 bits).
const MaxMsgLen = 14

// msgKey identifies a transmission's content.
type msgKey struct {
	b [MaxMsgLen]byte
	n uint8
}

// Group is the receptions of one transmission, handed to Grouper's emit
// callback; it is only valid during the call.
type Group struct {
	Msg []byte
	Rx  []Reception
	// First is the arrival time (the caller's clock, ns) of the first
	// reception.
	First int64
	key   msgKey
	rx    [MaxReceptions]Reception
	done  bool
}

// GrouperStats counts what the grouper did.
type GrouperStats struct {
	// Groups emitted; Dropped receptions refused because MaxOpen groups
	// were already waiting; Repeats are receptions of the same bytes by a
	// sensor already in the group (a retransmission: it starts a new
	// group).
	Groups, Dropped, Repeats uint64
}

// Grouper gathers receptions with the same Mode S bytes from different
// sensors. A group stays open for Hold (arrival time, ns): long enough for
// every sensor's copy to arrive over the network, and far longer than the
// sensors' light-time, so the bytes alone key it. Repeated identical
// transmissions (an unchanged altitude reply, a DF11 squitter) are told
// apart by the sensor repeating: the older group is then emitted at once.
// Not safe for concurrent use; allocation-free once its pool is warm.
type Grouper struct {
	Hold    int64
	MaxOpen int
	Stats   GrouperStats
	open    map[msgKey]*Group
	order   []*Group // open groups by first arrival (emission order)
	free    []*Group
}

// NewGrouper returns a grouper holding groups for hold ns, at most
// maxOpen at once.
func NewGrouper(hold int64, maxOpen int) *Grouper {
	return &Grouper{Hold: hold, MaxOpen: maxOpen, open: make(map[msgKey]*Group, maxOpen)}
}

// Add records that sensor r.Sensor received msg (at r.T on its clock),
// arriving at arrival (ns, the caller's clock). Groups made complete by a
// repeat are emitted through emit.
func (g *Grouper) Add(msg []byte, r Reception, arrival int64, emit func(*Group)) {
	if len(msg) == 0 || len(msg) > MaxMsgLen {
		return
	}
	var k msgKey
	k.n = uint8(copy(k.b[:], msg))
	grp := g.open[k]
	if grp != nil && (grp.has(r.Sensor) || len(grp.Rx) == MaxReceptions) {
		g.Stats.Repeats++
		g.finish(grp, emit)
		grp = nil
	}
	if grp == nil {
		if len(g.open) >= g.MaxOpen {
			g.Stats.Dropped++
			return
		}
		grp = g.get(k, arrival)
	}
	grp.Rx = append(grp.Rx, r)
}

// Expire emits every group older than Hold at now, oldest first.
func (g *Grouper) Expire(now int64, emit func(*Group)) {
	i := 0
	for ; i < len(g.order); i++ {
		grp := g.order[i]
		if !grp.done && now-grp.First < g.Hold {
			break
		}
		if !grp.done {
			g.finish(grp, emit)
		}
		g.free = append(g.free, grp)
	}
	n := copy(g.order, g.order[i:])
	clear(g.order[n:])
	g.order = g.order[:n]
}

// Open returns how many groups are waiting.
func (g *Grouper) Open() int { return len(g.open) }

func (g *Grouper) get(k msgKey, arrival int64) *Group {
	var grp *Group
	if n := len(g.free); n > 0 {
		grp, g.free = g.free[n-1], g.free[:n-1]
	} else {
		grp = new(Group)
	}
	grp.key, grp.First, grp.done = k, arrival, false
	grp.Msg = grp.key.b[:k.n]
	grp.Rx = grp.rx[:0]
	g.open[k] = grp
	g.order = append(g.order, grp)
	return grp
}

// finish emits a group and closes it; its memory returns to the pool
// when Expire passes it in the order.
func (g *Grouper) finish(grp *Group, emit func(*Group)) {
	delete(g.open, grp.key)
	grp.done = true
	g.Stats.Groups++
	emit(grp)
}

func (grp *Group) has(s SensorID) bool {
	for i := range grp.Rx {
		if grp.Rx[i].Sensor == s {
			return true
		}
	}
	return false
}
