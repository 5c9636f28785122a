package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

const sec = int64(time.Second)

// TestBucket walks one bucket through a table of frames: a full second to
// start with, refills proportional to the time passed, no refill when
// time goes backwards, and each limit alone.
func TestBucket(t *testing.T) {
	type step struct {
		at    int64 // ns after the start
		bytes int
		ok    bool
	}
	cases := []struct {
		name  string
		lim   Limits
		steps []step
	}{
		{"frames: one second's worth, then refill", Limits{FramesPerSecond: 2}, []step{
			{0, 1, true}, {0, 1, true}, {0, 1, false}, {sec / 2, 1, true}, {sec / 2, 1, false}, {2 * sec, 1, true}, {2 * sec, 1, true}, {2 * sec, 1, false},
		}},
		{"bytes", Limits{BytesPerSecond: 100}, []step{
			{0, 60, true}, {0, 60, false}, {0, 40, true}, {sec / 10, 10, true}, {sec / 10, 1, false},
		}},
		{"time going backwards refills nothing", Limits{FramesPerSecond: 1}, []step{
			{sec, 1, true}, {0, 1, false}, {sec / 2, 1, false}, {2 * sec, 1, true},
		}},
		{"no limits", Limits{}, []step{{0, 1 << 20, true}, {0, 1 << 20, true}, {0, 1 << 20, true}}},
		{"the tighter of two", Limits{FramesPerSecond: 1000, BytesPerSecond: 10}, []step{{0, 10, true}, {0, 1, false}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSet(c.lim)
			for i, st := range c.steps {
				b := s.Bucket("rx", st.at)
				why := b.Take(c.lim, st.bytes, st.at)
				if (why == "") != st.ok {
					t.Fatalf("step %d (t=%v, %d bytes): refused %q, want ok=%v", i, time.Duration(st.at), st.bytes, why, st.ok)
				}
				if b.Limited != !st.ok {
					t.Errorf("step %d: Limited %v", i, b.Limited)
				}
			}
		})
	}
}

// TestSetForgetsRefilledSensors: sensors silent for a second are
// forgotten, however many names were invented, and come back full.
func TestSetForgetsRefilledSensors(t *testing.T) {
	lim := Limits{FramesPerSecond: 1}
	s := NewSet(lim)
	for i := range 1000 {
		s.Bucket(string(rune('a'+i%26))+string(rune(i)), 0).Take(lim, 1, 0)
	}
	if s.Len() != 1000 {
		t.Fatalf("%d sensors remembered, want 1000", s.Len())
	}
	if why := s.Bucket("a\x00", 0).Take(lim, 1, 0); why == "" {
		t.Fatal("a sensor's second frame in the same instant passed a limit of 1 a second")
	}
	b := s.Bucket("new", 2*sec)
	if s.Len() != 1 {
		t.Errorf("%d sensors remembered two seconds later, want only the new one", s.Len())
	}
	if why := b.Take(lim, 1, 2*sec); why != "" {
		t.Errorf("a new sensor's first frame refused: %s", why)
	}
	if why := s.Bucket("a\x00", 2*sec).Take(lim, 1, 2*sec); why != "" {
		t.Errorf("a forgotten sensor came back without its second's worth: %s", why)
	}
}

// ExampleBucket: a sensor limited to 2 frames a second sends 3 in one
// instant; a second later it may send again.
func ExampleBucket() {
	lim := Limits{FramesPerSecond: 2}
	s := NewSet(lim)
	for i, at := range []int64{0, 0, 0, sec} {
		why := s.Bucket("rx1", at).Take(lim, 14, at)
		if why == "" {
			why = "ok"
		}
		fmt.Println(i, why)
	}
	// Output:
	// 0 ok
	// 1 ok
	// 2 is over 2 frames a second
	// 3 ok
}
