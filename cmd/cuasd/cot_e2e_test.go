package main

import (
	"bytes"
	"encoding/json"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/cot"
	"github.com/cuasd/cuasd/output/cot/cottest"
)

// picture is one read of the picture: tracks and the threat board's rows.
type picture struct {
	tracks  map[string]events.Track
	threats map[string]events.Threat
}

func readBoard(t *testing.T, base string) picture {
	t.Helper()
	var tr struct{ Tracks []events.Track }
	var th struct{ Threats []events.Threat }
	for _, q := range []struct {
		path string
		v    any
	}{{"/v1/tracks?limit=10000", &tr}, {"/v1/threats/active?limit=1000", &th}} {
		resp, body := get(t, base+q.path)
		if resp.StatusCode != 200 || json.Unmarshal(body, q.v) != nil {
			t.Fatalf("%s: %d %s", q.path, resp.StatusCode, body)
		}
	}
	b := picture{tracks: map[string]events.Track{}, threats: map[string]events.Threat{}}
	for _, x := range tr.Tracks {
		b.tracks[cot.UID("default", x.TrackID)] = x
	}
	for _, x := range th.Threats {
		b.threats[cot.UID("default", x.TrackID)] = x
	}
	return b
}

// collect reads datagrams for about d and keeps the newest per uid.
func collect(t *testing.T, l *net.UDPConn, d time.Duration, into map[string][]byte) {
	t.Helper()
	buf := make([]byte, 65536)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		_ = l.SetReadDeadline(end)
		n, _, err := l.ReadFromUDP(buf)
		if err != nil {
			return
		}
		doc := bytes.Clone(buf[:n])
		_, rest, _ := strings.Cut(string(doc), `uid="`)
		uid, _, _ := strings.Cut(rest, `"`)
		into[uid] = doc
	}
}

// wantAffiliation is the affiliation the board's row implies (docs/TAK.md).
func wantAffiliation(th events.Threat) byte {
	switch {
	case th.Identity.AllowListed:
		return 'f'
	case th.Identity.Side == "allied" || th.Identity.Side == "counter-uas":
		return 'a'
	case th.Decision == "intercept-recommended", th.Decision == "alert" && th.Identity.Side == "adversary":
		return 'h'
	case th.Decision == "alert":
		return 's'
	}
	return 'u'
}

func within(v, a, b, slack float64) bool {
	return v >= math.Min(a, b)-slack && v <= math.Max(a, b)+slack
}

// TestCoTDemoAgreesWithTracks runs `cuasd serve --demo` with a UDP and a
// TAK Server (TCP) sink, parses what arrives with @tak-ps/node-cot and
// checks it against /v1/tracks and the threat board read before and after:
// position, speed, type and the affiliation of the board's decision.
func TestCoTDemoAgreesWithTracks(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	streamed := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		n, _ := c.Read(buf)
		streamed <- buf[:n]
	}()
	base, stop := startServe(t, "--demo", "--cot-udp", l.LocalAddr().String(), "--tak-server", "tcp://"+ln.Addr().String())
	defer stop()

	warm := map[string][]byte{}
	collect(t, l, 4*time.Second, warm)
	before := readBoard(t, base)
	latest := map[string][]byte{}
	collect(t, l, 3*time.Second, latest)
	after := readBoard(t, base)

	var uids []string
	var docs [][]byte
	for uid, doc := range latest {
		a, okA := before.threats[uid]
		b, okB := after.threats[uid]
		if okA && okB && a.Decision == b.Decision && a.Identity == b.Identity {
			uids, docs = append(uids, uid), append(docs, doc)
		}
	}
	if len(uids) < 5 {
		t.Fatalf("only %d tracks to compare (received %d uids)", len(uids), len(latest))
	}
	got := cottest.Parse(t, docs)
	for i, g := range got {
		checkDemoEvent(t, g, before, after, uids[i])
	}
	if s := <-streamed; !bytes.Contains(s, []byte("<event ")) {
		t.Errorf("the TAK Server stream received %q", s)
	}
	checkOutputsEndpoint(t, base)
}

func checkDemoEvent(t *testing.T, g cottest.Parsed, before, after picture, uid string) {
	t.Helper()
	if g.Error != "" {
		t.Fatalf("node-cot rejected %s: %s", uid, g.Error)
	}
	a, b := before.tracks[uid], after.tracks[uid]
	th := after.threats[uid]
	if a.Lat == nil || b.Lat == nil {
		return // not in both track lists (expired in between)
	}
	// 0.003° (≈ 300 m) is slack for the time between event and reads.
	if !within(g.Lat, *a.Lat, *b.Lat, 0.003) || !within(g.Lon, *a.Lon, *b.Lon, 0.003) {
		t.Errorf("%s at %v,%v; tracks said %v,%v then %v,%v", uid, g.Lat, g.Lon, *a.Lat, *a.Lon, *b.Lat, *b.Lon)
	}
	if a.SpeedMps != nil && b.SpeedMps != nil && (g.Speed == nil || !within(*g.Speed, *a.SpeedMps, *b.SpeedMps, 5)) {
		t.Errorf("%s speed %v; tracks said %v then %v", uid, g.Speed, *a.SpeedMps, *b.SpeedMps)
	}
	if len(g.Type) < 3 || g.Type[2] != wantAffiliation(th) {
		t.Errorf("%s type %s for decision %s (side %q, allow-listed %v)", uid, g.Type, th.Decision, th.Identity.Side, th.Identity.AllowListed)
	}
	drone := strings.HasPrefix(th.TrackID, "rid:") || strings.HasPrefix(th.TrackID, "mav:") || strings.HasPrefix(th.TrackID, "dji:")
	if drone != strings.HasSuffix(g.Type, "-Q") || !g.Airborne {
		t.Errorf("%s (%s) has type %s", uid, th.TrackID, g.Type)
	}
	if !strings.Contains(g.Remarks, strings.ToUpper(th.Decision)) || !strings.Contains(g.Remarks, "UNAUTHENTICATED") {
		t.Errorf("%s remarks %q", uid, g.Remarks)
	}
}

func checkOutputsEndpoint(t *testing.T, base string) {
	t.Helper()
	resp, body := get(t, base+"/v1/outputs")
	var out struct{ Outputs []output.SinkStatus }
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || len(out.Outputs) != 2 {
		t.Fatalf("/v1/outputs %d %s", resp.StatusCode, body)
	}
	for _, s := range out.Outputs {
		if s.Sent == 0 || !s.Connected {
			t.Errorf("sink %+v sent nothing", s)
		}
	}
}
