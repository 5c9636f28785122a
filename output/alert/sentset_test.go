package alert

import "testing"

// TestSentSetForgetsOldestFirst: the per-process memory of delivered states
// stays bounded and forgets the oldest key first.
func TestSentSetForgetsOldestFirst(t *testing.T) {
	s := newSentSet(2)
	s.add("a/1")
	s.add("a/1") // a repeat takes no second place
	s.add("b/1")
	if !s.has("a/1") || !s.has("b/1") {
		t.Fatal("both keys should be remembered")
	}
	s.add("c/1")
	if s.has("a/1") || !s.has("b/1") || !s.has("c/1") {
		t.Fatalf("after a third key: want a forgotten, b and c kept; keys %v", s.keys)
	}
	if got := sentKey(&Message{ID: "al-x", Seq: 3}); got != "al-x/3" {
		t.Fatalf("sentKey = %q", got)
	}
	if !s.claim("d/1") || s.claim("d/1") {
		t.Fatal("a key being sent can be claimed once")
	}
	s.release("d/1")
	if !s.claim("d/1") {
		t.Fatal("a released claim (a failed send) can be claimed again")
	}
	s.add("d/1")
	s.release("d/1")
	if s.claim("d/1") {
		t.Fatal("a sent key cannot be claimed")
	}
}
