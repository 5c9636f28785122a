package fusion

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
	js       jetstream.JetStream
	replicas int
	kv       jetstream.KeyValue
	instance string
	ttl      time.Duration
	log      *slog.Logger
	owned    [bus.ObsPartitions]atomic.Bool
	revs     [bus.ObsPartitions]uint64
}

// OwnersBucket is the bucket of partition ownership.
const OwnersBucket = "CUAS_FUSION_OWNERS"

// OpenOwners opens (creating) the bucket and takes a first share before
// returning, so that a lone instance owns every partition from the start.
func OpenOwners(ctx context.Context, js jetstream.JetStream, instance string, replicas int, ttl time.Duration, log *slog.Logger) (*Owners, error) {
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, ownersConfig(ttl, replicas))
	if err != nil {
		return nil, err
	}
	o := &Owners{js: js, replicas: replicas, kv: kv, instance: instance, ttl: ttl, log: log}
	o.tick(ctx)
	return o, nil
}

func ownersConfig(ttl time.Duration, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      OwnersBucket,
		Description: "which cuasd instance records the gate decisions of each track partition",
		TTL:         ttl,
		Replicas:    max(replicas, 1),
		Storage:     jetstream.FileStorage,
	}
}

// Missing reports whether the ownership bucket no longer exists.
func (o *Owners) Missing(ctx context.Context) (bool, error) {
	_, err := o.js.KeyValue(ctx, OwnersBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return true, nil
	}
	return false, err
}

// Recreate creates the ownership bucket again; the next renewal claims
// the partitions anew.
func (o *Owners) Recreate(ctx context.Context) error {
	_, err := o.js.CreateOrUpdateKeyValue(ctx, ownersConfig(o.ttl, o.replicas))
	return err
}

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
					_ = o.kv.Delete(rctx, partKey(p), jetstream.LastRevision(o.revs[p]))
					o.owned[p].Store(false)
				}
			}
			_ = o.kv.Delete(rctx, "alive."+o.instance)
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
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
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
			_ = o.kv.Delete(ctx, partKey(p), jetstream.LastRevision(o.revs[p]))
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
