package fusion

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

func ownersKV(t *testing.T) *bus.KV {
	t.Helper()
	kv, err := natstest.Start(t).JetStream().KeyValue(context.Background(), OwnersBucketConfig(2*time.Second, 1))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// TestOwnersShareAndTakeOver: two instances split the partitions without
// overlap, and when one stops the other takes them all.
func TestOwnersShareAndTakeOver(t *testing.T) {
	kv := ownersKV(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	a, err := OpenOwners(ctx, kv, "a", 2*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	if a.Count() != bus.ObsPartitions {
		t.Fatalf("a lone instance owns %d partitions", a.Count())
	}
	b, err := OpenOwners(ctx, kv, "b", 2*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	actx, stopA := context.WithCancel(ctx)
	bctx, stopB := context.WithCancel(ctx)
	defer stopB()
	doneA := make(chan struct{})
	go func() { a.Run(actx); close(doneA) }()
	go b.Run(bctx)
	split := func() (int, int, bool) {
		overlap := false
		for p := 0; p < bus.ObsPartitions; p++ {
			if a.owned[p].Load() && b.owned[p].Load() {
				overlap = true
			}
		}
		return a.Count(), b.Count(), overlap
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		na, nb, overlap := split()
		if overlap {
			t.Fatal("a partition has two owners")
		}
		if na == bus.ObsPartitions/2 && nb == bus.ObsPartitions/2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fair split: a %d, b %d", na, nb)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopA()
	<-doneA
	for b.Count() != bus.ObsPartitions {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("b took over only %d partitions", b.Count())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Every track id maps to exactly the owner's decision.
	for _, id := range []string{"adsb:406B90", "rid:X", "mav:1-1@udp"} {
		if !b.Owns(id) || a.Owns(id) {
			t.Fatalf("%s: a %v b %v", id, a.Owns(id), b.Owns(id))
		}
	}
}
