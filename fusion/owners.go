package fusion

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/bus"
)

// Owners decides which cuasd instance records the gate decisions of each
// track partition, so that instances sharing a NATS cluster do not record
// the same decision change twice. Every instance still evaluates every
// track (each holds the whole picture); only the owner of a track's
// partition appends receipts for it.
//
// Ownership lives in a JetStream key-value bucket whose keys expire after
// a TTL: each instance keeps an "alive.<instance>" key fresh and holds up
// to its fair share (partitions / live instances, rounded up) of the
// "p<NN>" keys, renewing them with compare-and-swap updates. A dead
// instance's keys expire and the others claim them; a new instance makes
// the others release their surplus.
type Owners struct {
	kv       OwnersKV
	instance string
	ttl      time.Duration
	log      *slog.Logger
	owned    [bus.ObsPartitions]atomic.Bool
	revs     [bus.ObsPartitions]uint64
}

// OwnersBucket is the bucket of partition ownership.
const OwnersBucket = "CUAS_FUSION_OWNERS"

// OwnersKV is the key-value bucket ownership lives in (a *bus.KV opened
// with OwnersBucketConfig): keys expire after the bucket's TTL, updates
// and deletes compare the revision.
type OwnersKV interface {
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)
	// Delete with lastRevision 0 deletes whatever the key holds.
	Delete(ctx context.Context, key string, lastRevision uint64) error
	Keys(ctx context.Context) ([]string, error)
	Missing(ctx context.Context) (bool, error)
	Recreate(ctx context.Context) error
}

// DefaultOwnersTTL is the ownership keys' time to live when none is given.
const DefaultOwnersTTL = 10 * time.Second

// OwnersBucketConfig is the ownership bucket's configuration; ttl 0 is
// DefaultOwnersTTL. OpenOwners must be given the same ttl.
func OwnersBucketConfig(ttl time.Duration, replicas int) bus.KVConfig {
	if ttl <= 0 {
		ttl = DefaultOwnersTTL
	}
	return bus.KVConfig{
		Bucket:      OwnersBucket,
		Description: "which cuasd instance records the gate decisions of each track partition",
		TTL:         ttl,
		Replicas:    replicas,
	}
}

// OpenOwners takes a first share of the partitions in kv (the bucket of
// OwnersBucketConfig with the same ttl) before returning, so that a lone
// instance owns every partition from the start.
func OpenOwners(ctx context.Context, kv OwnersKV, instance string, ttl time.Duration, log *slog.Logger) (*Owners, error) {
	if ttl <= 0 {
		ttl = DefaultOwnersTTL
	}
	o := &Owners{kv: kv, instance: instance, ttl: ttl, log: log}
	o.tick(ctx)
	return o, nil
}

// Missing reports whether the ownership bucket no longer exists.
func (o *Owners) Missing(ctx context.Context) (bool, error) { return o.kv.Missing(ctx) }

// Recreate creates the ownership bucket again; the next renewal claims
// the partitions anew.
func (o *Owners) Recreate(ctx context.Context) error { return o.kv.Recreate(ctx) }

// Owns reports whether this instance records decisions for trackID.
func (o *Owners) Owns(trackID string) bool { return o.owned[bus.ObsPartition(trackID)].Load() }

// Count is the number of partitions this instance owns.
func (o *Owners) Count() int {
	n := 0
	for i := range o.owned {
		if o.owned[i].Load() {
			n++
		}
	}
	return n
}

// Run keeps the share until ctx ends, then releases it so that another
// instance can take over without waiting for the TTL.
func (o *Owners) Run(ctx context.Context) error {
	t := time.NewTicker(o.ttl / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			for p := range o.owned {
				if o.owned[p].Load() {
					_ = o.kv.Delete(rctx, partKey(p), o.revs[p])
					o.owned[p].Store(false)
				}
			}
			_ = o.kv.Delete(rctx, "alive."+o.instance, 0)
			cancel()
			return nil
		case <-t.C:
			o.tick(ctx)
		}
	}
}

func partKey(p int) string { return "p" + strconv.Itoa(100 + p)[1:] }

func (o *Owners) tick(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, o.ttl/2)
	defer cancel()
	if _, err := o.kv.Put(ctx, "alive."+o.instance, []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
		o.log.Warn("fusion owners: heartbeat", "err", err)
		o.dropAll()
		return
	}
	keys, err := o.kv.Keys(ctx)
	if err != nil {
		o.log.Warn("fusion owners: list", "err", err)
		o.dropAll()
		return
	}
	alive := 0
	for _, k := range keys {
		if strings.HasPrefix(k, "alive.") {
			alive++
		}
	}
	share := (bus.ObsPartitions + max(alive, 1) - 1) / max(alive, 1)
	mine := 0
	// Renew what we hold first, releasing any surplus.
	for p := range o.owned {
		if !o.owned[p].Load() {
			continue
		}
		if mine >= share {
			_ = o.kv.Delete(ctx, partKey(p), o.revs[p])
			o.owned[p].Store(false)
			continue
		}
		rev, err := o.kv.Update(ctx, partKey(p), []byte(o.instance), o.revs[p])
		if err != nil {
			o.owned[p].Store(false) // lost it (expired and taken): stop recording
			continue
		}
		o.revs[p] = rev
		mine++
	}
	// Claim unowned partitions up to the share.
	for p := range o.owned {
		if mine >= share || o.owned[p].Load() {
			continue
		}
		rev, err := o.kv.Create(ctx, partKey(p), []byte(o.instance))
		if err != nil {
			continue // owned by someone else
		}
		o.revs[p] = rev
		o.owned[p].Store(true)
		mine++
	}
}

func (o *Owners) dropAll() {
	for p := range o.owned {
		o.owned[p].Store(false)
	}
}
