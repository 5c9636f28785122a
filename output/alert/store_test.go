package alert

import (
	"context"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/natstest"
)

func TestStoreListGetAndDeliveries(t *testing.T) {
	ns := natstest.Start(t)
	ctx := context.Background()
	st, err := OpenStore(ctx, ns.JetStream(), StoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{
		{ID: "al-01", State: StateOpen, Seq: 1, Rule: "a", Zone: Zone{ID: "z"}, OpenedAt: t0, Sinks: []string{"y", "x"}},
		{ID: "al-02", State: StateResolved, Seq: 3, Rule: "b", Zone: Zone{ID: "z"}, OpenedAt: t0.Add(time.Minute), Sinks: []string{"x"}},
		{ID: "al-03", State: StateOpen, Seq: 1, Rule: "a", Zone: Zone{ID: "w"}, OpenedAt: t0.Add(2 * time.Minute), Sinks: []string{"x"}},
	}
	for i := range msgs {
		if err := st.put(ctx, &msgs[i], t0); err != nil {
			t.Fatal(err)
		}
	}
	// A late delivery outcome of an older state must not overwrite the newer state's.
	if err := st.attempt(ctx, "al-02", "x", 2, Delivered, 1, "", t0); err != nil {
		t.Fatal(err)
	}
	if err := st.attempt(ctx, "al-01", "y", 1, Failed, 4, "503", t0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"all newest first", Filter{}, []string{"al-03", "al-02", "al-01"}},
		{"state", Filter{State: StateOpen}, []string{"al-03", "al-01"}},
		{"rule and zone", Filter{Rule: "a", Zone: "z"}, []string{"al-01"}},
		{"limit", Filter{Limit: 1}, []string{"al-03"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := st.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if len(ids) != len(tc.want) {
				t.Fatalf("got %v, want %v", ids, tc.want)
			}
			for i := range ids {
				if ids[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", ids, tc.want)
				}
			}
		})
	}
	r, ok, err := st.Get(ctx, "al-01")
	if err != nil || !ok || len(r.Deliveries) != 2 || r.Deliveries[0].Sink != "x" || r.Deliveries[1].Status != Failed || r.Deliveries[1].Attempts != 4 {
		t.Fatalf("al-01: %+v %v %v", r, ok, err)
	}
	if r, _, _ := st.Get(ctx, "al-02"); r.Deliveries[0].Status != Pending || r.Deliveries[0].Seq != 3 {
		t.Errorf("an older state's outcome overwrote the newer: %+v", r.Deliveries)
	}
	for _, id := range []string{"al-99", "x", "al-ZZ", "../al-01", "al-01.x"} {
		if _, ok, err := st.Get(ctx, id); ok || err != nil {
			t.Errorf("Get(%q) = %v, %v", id, ok, err)
		}
	}
}
