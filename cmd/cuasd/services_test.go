package main

import (
	"testing"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/reference"
)

// TestClassifier: a track's claims find the database's side — DJI's
// published serial prefix (1581) is a dual-use manufacturer's; an unknown
// prefix finds nothing.
func TestClassifier(t *testing.T) {
	db, err := reference.Default()
	if err != nil {
		t.Fatal(err)
	}
	c := board.Classifier(db)
	want := db.Lookup(func() reference.Query { q := reference.NewQuery(); q.SerialNumber = "1581"; return q }()).Side
	if want == "" || want == reference.SideUnknown {
		t.Fatalf("the database has no side for serial prefix 1581: %q", want)
	}
	if got := c(&fusion.Track{UASID: "1581F5FKD229400B", Category: remoteid.UATypeName(2)}); got != gate.Side(want) {
		t.Errorf("DJI serial: %q, database %q", got, want)
	}
	if got := c(&fusion.Track{UASID: "ZZ9X7INTRUDER01"}); got != "" && got != gate.Side(reference.SideUnknown) {
		t.Errorf("unknown manufacturer code classified as %q", got)
	}
	// A DJI DroneID serial is not a CTA-2063 one; the protocol says DJI.
	if got := c(&fusion.Track{UASID: "3NZEXAMPLEDJI003", Protocols: []string{"dji"}}); got != gate.Side(want) {
		t.Errorf("DJI DroneID: %q, database %q", got, want)
	}
	if got := c(&fusion.Track{UASID: "3NZEXAMPLEDJI003", Protocols: []string{"remoteid"}}); got == gate.Side(want) {
		t.Errorf("a non-CTA serial over Remote ID classified as DJI")
	}
	if got := c(&fusion.Track{}); got != "" {
		t.Errorf("no claims classified as %q", got)
	}
}
