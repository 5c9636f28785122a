package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
)

// A replayed capture is published through the real Publisher into
// CUAS_RAW; replaying it again adds nothing (each frame's id is its place
// in the capture), so a retried replay is harmless.
func TestReplayPublishesOnceThroughTheSink(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	pub := NewPublisher(bus.NewJetStream(js), nil)
	capture := "# two DF17 frames and a repeat of the first\n8D406B902015A678D4D220AA4BDA\n8D4840D6202CC371C32CE0576098\n*8D406B902015A678D4D220AA4BDA;\n"
	cfg := ReplayConfig{Format: "hex", Protocol: "adsb", Sensor: "rx1", Max: true, Name: "test"}
	for run, want := range []struct{ accepted, dups int }{{3, 0}, {0, 3}} {
		src, err := NewReplay(cfg, []byte(capture))
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Run(context.Background(), pub, lifecycle.Discard); err != nil {
			t.Fatal(err)
		}
		if src.Accepted != want.accepted || src.Duplicates != want.dups {
			t.Errorf("run %d: accepted %d, duplicates %d; want %d, %d", run, src.Accepted, src.Duplicates, want.accepted, want.dups)
		}
	}
	st, err := js.Stream(context.Background(), bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 3 {
		t.Errorf("CUAS_RAW holds %d messages, want 3", info.State.Msgs)
	}
	if src, _ := NewReplay(cfg, []byte(capture)); src.Name() != "replay test" || src.Counters().Protocols[0] != "adsb" {
		t.Errorf("name %q, counters %+v", src.Name(), src.Counters())
	}
}

// A capture with no valid frame, or an unknown format, is an error that
// names the capture.
func TestReplayRefusesEmptyCapture(t *testing.T) {
	for _, tc := range []struct {
		name, format, protocol, data, want string
	}{
		{"no beast frame", "beast", "", "hello", "no valid beast frame in cap.bin (5 bytes)"},
		{"unknown format", "gif", "", "GIF89a", "cap.bin: unknown --format \"gif\""},
		{"hex without protocol", "hex", "", "8D40", "cap.bin: --format hex needs --protocol"},
		{"bad hex", "hex", "adsb", "zz", "cap.bin: line 1: not hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReplay(ReplayConfig{Format: tc.format, Protocol: tc.protocol, Name: "cap.bin"}, []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
