package sensors

import (
	"sync"
	"time"

	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// assocTTL is how long a MAC keeps the identity its Basic ID gave it, as
// cuasd's own Remote ID decoder keeps a transmitter's (30 s).
const assocTTL = 30 * time.Second

// maxAssoc bounds the remembered transmitters of one input.
const maxAssoc = 4096

// identity is what a Basic ID said about a transmitter.
type identity struct {
	id             string
	idType, uaType uint8
	seen           int64
}

// associator ties the messages of one transmitter (sensor and MAC)
// together: BLE scanners print a Basic ID and a Location heard in separate
// advertisements on separate lines.
type associator struct {
	mu sync.Mutex
	m  map[string]identity
}

// resolve remembers the identity of a claim that has one, and fills in
// the identity of one that has only a MAC; ok is false when nothing is
// known of that MAC.
func (a *associator) resolve(sensor string, c *droneclaim.Claim, now int64) (ok bool) {
	if c.MAC == "" {
		return c.ID != ""
	}
	key := sensor + "|" + c.MAC
	a.mu.Lock()
	defer a.mu.Unlock()
	if c.ID != "" {
		if a.m == nil {
			a.m = map[string]identity{}
		}
		if len(a.m) >= maxAssoc {
			a.evict(now)
		}
		if len(a.m) < maxAssoc {
			a.m[key] = identity{id: c.ID, idType: c.IDType, uaType: c.UAType, seen: now}
		}
		return true
	}
	e, found := a.m[key]
	if !found || now-e.seen > int64(assocTTL) {
		return false
	}
	c.ID, c.IDType, c.UAType = e.id, e.idType, e.uaType
	return true
}

// evict forgets the transmitters unheard for longer than assocTTL; the
// caller holds mu.
func (a *associator) evict(now int64) {
	for k, e := range a.m {
		if now-e.seen > int64(assocTTL) {
			delete(a.m, k)
		}
	}
}
