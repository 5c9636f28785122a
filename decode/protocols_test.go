package decode

import "testing"

func TestProtocolTable(t *testing.T) {
	seenPrefix := map[string]bool{}
	for i, p := range Protocols() {
		t.Run(string(p.Protocol), func(t *testing.T) {
			if p.Protocol.Index() != i || !p.Protocol.Valid() {
				t.Fatalf("Index = %d, want %d", p.Protocol.Index(), i)
			}
			if seenPrefix[p.TrackPrefix] || p.TrackPrefix == "" || p.TrackPrefix[len(p.TrackPrefix)-1] != ':' {
				t.Fatalf("track prefix %q is empty, repeated or not ':'-terminated", p.TrackPrefix)
			}
			seenPrefix[p.TrackPrefix] = true
			got, key, ok := SplitTrackID(p.TrackPrefix + "K1")
			if !ok || got != p.Protocol || key != "K1" {
				t.Fatalf("SplitTrackID = %q %q %v", got, key, ok)
			}
			if p.MaxFrameBytes <= 0 {
				t.Fatalf("MaxFrameBytes %d", p.MaxFrameBytes)
			}
		})
	}
	if Protocol("nope").Valid() || Protocol("nope").TrackPrefix() != "nope:" {
		t.Fatal("unknown protocol handled wrongly")
	}
	if _, _, ok := SplitTrackID("zz:1"); ok {
		t.Fatal("unknown prefix accepted")
	}
	if got := ProtocolNames(); len(got) != NumProtocols || got[0] != "adsb" {
		t.Fatalf("ProtocolNames = %v", got)
	}
}
