package main

import (
	"bufio"
	"encoding/json"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/testshared"
)

// dump1090Oracle reads dump1090's verbose decode of the Beast capture: per
// ICAO address, every position it decoded (in order) and the last ident.
func dump1090Oracle(t *testing.T, path string) (pos map[string][][2]float64, ident map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pos, ident = map[string][][2]float64{}, map[string]string{}
	var icao string
	var lat float64
	haveLat := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "ICAO Address:"):
			fs := strings.Fields(line)
			icao = strings.ToUpper(fs[2])
			haveLat = false
		case strings.HasPrefix(line, "CPR latitude:"):
			fs := strings.Fields(line)
			v, err := strconv.ParseFloat(fs[2], 64)
			lat, haveLat = v, err == nil
		case strings.HasPrefix(line, "CPR longitude:") && haveLat:
			fs := strings.Fields(line)
			if v, err := strconv.ParseFloat(fs[2], 64); err == nil {
				pos[icao] = append(pos[icao], [2]float64{lat, v})
			}
			haveLat = false
		case strings.HasPrefix(line, "Ident:"):
			if fs := strings.Fields(line); len(fs) > 1 {
				ident[icao] = fs[1]
			}
		}
	}
	return pos, ident
}

// TestBeastListenAgainstDump1090 feeds the real Beast capture to
// --beast-listen over TCP, as readsb would, and checks the resulting tracks
// against dump1090's decode of the same capture: every callsign agrees, and
// every track's position is one that dump1090 also decoded for that
// aircraft.
func TestBeastListenAgainstDump1090(t *testing.T) {
	capture := testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin")
	oraclePos, oracleIdent := dump1090Oracle(t, testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.dump1090_decoded.txt"))
	if len(oraclePos) == 0 || len(oracleIdent) == 0 {
		t.Fatal("oracle parse found nothing")
	}
	base, lines, stop := startServeLines(t, "--beast-listen", "127.0.0.1:0", "--track-ttl", "10m")
	defer stop()
	var addr string
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter beast="); ok {
			addr = a
		}
	}
	if addr == "" {
		t.Fatalf("no beast adapter address in %q", lines)
	}
	data, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Send in uneven chunks so records straddle reads.
	for off := 0; off < len(data); {
		n := min(len(data)-off, 777+off%1000)
		if _, err := conn.Write(data[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	conn.Close()

	type trackJ struct {
		ID       string   `json:"id"`
		ICAO     string   `json:"icao"`
		Callsign string   `json:"callsign"`
		Lat      *float64 `json:"lat"`
		Lon      *float64 `json:"lon"`
	}
	var tracks []trackJ
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get(t, base+"/v1/tracks")
		var out struct {
			Tracks []trackJ `json:"tracks"`
		}
		_ = json.Unmarshal(body, &out)
		tracks = out.Tracks
		positioned, named := 0, 0
		for _, tr := range tracks {
			if tr.Lat != nil {
				positioned++
			}
			if tr.Callsign != "" {
				named++
			}
		}
		if named == len(oracleIdent) && positioned >= len(oraclePos) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %d tracks, %d with callsigns (dump1090: %d), %d with positions (dump1090: %d)",
				len(tracks), named, len(oracleIdent), positioned, len(oraclePos))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, tr := range tracks {
		if want, ok := oracleIdent[tr.ICAO]; ok && tr.Callsign != want {
			t.Errorf("%s: callsign %q, dump1090 %q", tr.ICAO, tr.Callsign, want)
		}
		if tr.Lat == nil {
			continue
		}
		best := math.Inf(1)
		for _, p := range oraclePos[tr.ICAO] {
			best = math.Min(best, math.Max(math.Abs(p[0]-*tr.Lat), math.Abs(p[1]-*tr.Lon)))
		}
		if best > 1e-5 {
			t.Errorf("%s: position %.5f,%.5f is not among dump1090's %d decodes (nearest %.6f° away)",
				tr.ICAO, *tr.Lat, *tr.Lon, len(oraclePos[tr.ICAO]), best)
		}
	}
	t.Logf("%d tracks; dump1090 named %d and positioned %d aircraft", len(tracks), len(oracleIdent), len(oraclePos))
}

// TestConnectOutToReceivers: cuasd connects out to a receiver's Beast
// (30005) and AVR (30002) output ports, as readsb users configure, and
// reconnects when the receiver comes back.
func TestConnectOutToReceivers(t *testing.T) {
	beast, err := os.ReadFile(testshared.Path(t, "data", "adsb", "traffic_sample_dump1090.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	avr, err := os.ReadFile(testshared.Path(t, "data", "adsb", "vector_frames.avr"))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(data []byte) (string, func()) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for n := 0; ; n++ {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				if n == 0 {
					c.Close() // the first connection drops at once: cuasd must reconnect
					continue
				}
				c.Write(data)
				time.Sleep(time.Second)
				c.Close()
			}
		}()
		return ln.Addr().String(), func() { ln.Close() }
	}
	bAddr, bStop := serve(beast)
	defer bStop()
	aAddr, aStop := serve(avr)
	defer aStop()
	base, stop := startServe(t, "--beast-connect", bAddr, "--avr-connect", aAddr, "--track-ttl", "10m")
	defer stop()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get(t, base+"/v1/tracks?limit=1000")
		var out struct {
			Tracks []struct {
				Sensors []string `json:"sensors"`
			} `json:"tracks"`
		}
		_ = json.Unmarshal(body, &out)
		fromB, fromA := 0, 0
		for _, tr := range out.Tracks {
			for _, s := range tr.Sensors {
				switch s {
				case bus.SensorName(bAddr):
					fromB++
				case bus.SensorName(aAddr):
					fromA++
				}
			}
		}
		if fromB > 0 && fromA > 0 {
			t.Logf("%d tracks from the Beast receiver, %d from the AVR receiver", fromB, fromA)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tracks from Beast %d, from AVR %d", fromB, fromA)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
