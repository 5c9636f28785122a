// Command fakeserver is a development fixture for the map, not part of
// cuasd: it serves the real web.Handler and the real httpapi server, and
// answers the live endpoints (tracks, threat board and its stream,
// geofences, swarm topology, receipts) with a small made-up scene in the
// documented shapes. Every axis evidence says "fixture".
//
// It exists so the page can be developed and looked at before every
// subsystem is wired into `cuasd serve --demo`; the browser test runs
// against the real cuasd (set E2E_SERVER=fake to point it here instead).
//
//	go run ./web/e2e/fakeserver -addr 127.0.0.1:8088
package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/reference"
	"github.com/cuasd/cuasd/web"
)

const base = "/api/cuas"

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	s := newScene()
	db, err := reference.Default()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	api := httpapi.NewServer(httpapi.Deps{
		BasePath: base,
		Drones:   db,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Web:      web.Handler(base, web.Options{}),
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+base+"/v1/tracks", s.tracks)
	mux.HandleFunc("GET "+base+"/v1/tracks/{id}", s.track)
	mux.HandleFunc("GET "+base+"/v1/threats/active", s.active)
	mux.HandleFunc("GET "+base+"/v1/threats/stream", s.stream)
	mux.HandleFunc("GET "+base+"/v1/geofences", s.geofences)
	mux.HandleFunc("GET "+base+"/v1/swarm/topology", s.swarms)
	mux.HandleFunc("GET "+base+"/v1/sensors", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"sensors": [{"id": "kit-1", "kind": "wardragon", "position": {"lat": 51.47, "lon": -0.45, "source": "reported"}, "messages": 12, "down": false, "expect_seconds": 60}], "count": 1}`))
	})
	mux.HandleFunc("GET "+base+"/v1/receipt/ledger", s.ledger)
	mux.HandleFunc("GET "+base+"/v1/receipt/checkpoint", s.checkpointH)
	mux.HandleFunc("GET "+base+"/v1/receipt/{index}", s.receipt)
	mux.Handle("/", api)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("cuasd serving http://%s%s/\n", ln.Addr(), base)
	_ = http.Serve(ln, mux)
}

type track struct {
	TrackID   string   `json:"track_id"`
	ID        string   `json:"id"` // deprecated alias of track_id, as cuasd serves it
	Protocols []string `json:"protocols"`
	ICAO      string   `json:"icao,omitempty"`
	UASID     string   `json:"uas_id,omitempty"`
	Operator  string   `json:"operator_id,omitempty"`
	Callsign  string   `json:"callsign,omitempty"`
	Lat       float64  `json:"lat"`
	Lon       float64  `json:"lon"`
	AltM      float64  `json:"alt_m"`
	Speed     float64  `json:"speed_mps"`
	Heading   float64  `json:"heading_deg"`
	Sensors   []string `json:"sensors"`
	First     string   `json:"first_seen"`
	Last      string   `json:"last_seen"`
	Obs       int      `json:"observations"`
	History   []point  `json:"history,omitempty"`
	swarm     string
	receipt   int
}

type point struct {
	T   string  `json:"t"`
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

type scene struct {
	mu    sync.Mutex
	start time.Time
	tree  *testonly.Tree
	envs  []dsse.Envelope
	times []time.Time
	hist  map[string][]point
}

// The protected zone: a 1.5 km circle around a made-up airfield.
var zoneLat, zoneLon, zoneR = 51.4700, -0.4543, 1500.0

func newScene() *scene {
	s := &scene{start: time.Now(), tree: testonly.New(rfc6962.DefaultHasher), hist: map[string][]point{}}
	for i := 0; i < 12; i++ {
		s.appendReceipt(fmt.Sprintf("fixture-%d", i), "monitor")
	}
	return s
}

func (s *scene) appendReceipt(subject, decision string) int {
	pred, _ := json.Marshal(map[string]any{"decision": decision, "track_id": subject, "fixture": true})
	st, _ := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []map[string]any{{"name": subject, "digest": map[string]string{"sha256": hex.EncodeToString(sha256.New().Sum(pred))}}},
		"predicateType": "https://cuasd.dev/fixture/v1",
		"predicate":     json.RawMessage(pred),
	})
	env := dsse.Envelope{PayloadType: "application/vnd.in-toto+json", Payload: base64.StdEncoding.EncodeToString(st),
		Signatures: []dsse.Signature{{KeyID: "fixture", Sig: base64.StdEncoding.EncodeToString([]byte("unsigned placeholder"))}}}
	b, _ := json.Marshal(env)
	s.tree.AppendData(b)
	s.envs = append(s.envs, env)
	s.times = append(s.times, time.Now())
	return len(s.envs) - 1
}

// now computes every track at the current time: circling drones, a swarm of
// four, one drone flying through the zone, a MAVLink vehicle and an airliner.
func (s *scene) now() []*track {
	t := time.Since(s.start).Seconds()
	first := s.start.UTC().Format(time.RFC3339Nano)
	last := time.Now().UTC().Format(time.RFC3339Nano)
	mk := func(id string, protos []string, lat, lon, alt, speed, hdg float64) *track {
		return &track{TrackID: id, ID: id, Protocols: protos, Lat: lat, Lon: lon, AltM: alt, Speed: speed, Heading: math.Mod(hdg+360, 360),
			Sensors: []string{"rx-north"}, First: first, Last: last, Obs: int(t * 2)}
	}
	var out []*track
	circle := func(id string, cLat, cLon, r, period, alt float64) *track {
		a := 2 * math.Pi * t / period
		lat, lon := offset(cLat, cLon, r*math.Cos(a), r*math.Sin(a))
		tr := mk(id, []string{"remoteid"}, lat, lon, alt, 2*math.Pi*r/period, math.Mod(math.Atan2(math.Cos(a), -math.Sin(a))*180/math.Pi+360, 360))
		return tr
	}
	d1 := circle("rid:1596F3A1B2", zoneLat+0.02, zoneLon-0.03, 300, 90, 80)
	d1.UASID, d1.Operator = "1596F3A1B2C3D4E5", "GBR-OP-123456"
	out = append(out, d1)
	// A drone crossing the zone from west to east, again and again.
	x := math.Mod(t*15, 6000) - 3000
	lat, lon := offset(zoneLat+0.002, zoneLon, 0, x)
	d2 := mk("rid:BREACH01", []string{"remoteid"}, lat, lon, 60, 15, 90)
	d2.UASID = "1581F5BKD223X00B"
	out = append(out, d2)
	for i := 0; i < 4; i++ {
		a := 2 * math.Pi * t / 120
		lat, lon := offset(zoneLat-0.025, zoneLon+0.02, 600*math.Cos(a)+float64(i%2)*60, 600*math.Sin(a)+float64(i/2)*60)
		sw := mk(fmt.Sprintf("rid:SWARM%02d", i), []string{"remoteid"}, lat, lon, 50+float64(i)*5, 31, math.Mod(math.Atan2(math.Cos(a), -math.Sin(a))*180/math.Pi+360, 360))
		sw.swarm = "swarm-1"
		out = append(out, sw)
	}
	m := circle("mav:1-1@udp", zoneLat-0.01, zoneLon-0.04, 200, 60, 40)
	m.Protocols = []string{"mavlink"}
	out = append(out, m)
	lat, lon = offset(zoneLat+0.04, zoneLon-0.3, 0, math.Mod(t*120, 40000))
	ac := mk("adsb:406B90", []string{"adsb"}, lat, lon, 2400, 120, 90)
	ac.ICAO, ac.Callsign = "406B90", "EZY85MH"
	out = append(out, ac)
	for i, tr := range out {
		tr.receipt = i % len(s.envs)
		h := append(s.hist[tr.ID], point{T: last, Lat: tr.Lat, Lon: tr.Lon})
		if len(h) > 30 {
			h = h[len(h)-30:]
		}
		s.hist[tr.ID] = h
	}
	return out
}

func offset(lat, lon, north, east float64) (float64, float64) {
	return lat + north/111320, lon + east/(111320*math.Cos(lat*math.Pi/180))
}

func distance(lat1, lon1, lat2, lon2 float64) float64 {
	const R = 6371008.8
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := p2-p1, (lon2-lon1)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * R * math.Asin(math.Sqrt(a))
}

var axisIDs = []string{"proximity", "closure", "altitude", "speed", "classification", "behaviour", "swarm",
	"zone_sensitivity", "identity", "compliance", "signal_integrity", "corroboration", "freshness"}

func (s *scene) threat(tr *track) map[string]any {
	d := distance(tr.Lat, tr.Lon, zoneLat, zoneLon)
	prox := math.Max(0, 1-(d-zoneR)/5000)
	if d < zoneR {
		prox = 1
	}
	axes := make([]map[string]any, 0, 13)
	sum := 0.0
	for i, id := range axisIDs {
		v := prox
		if i > 0 {
			v = math.Abs(math.Sin(float64(i)*1.7 + prox))
		}
		if id == "swarm" && tr.swarm == "" {
			v = 0
		}
		sum += v
		axes = append(axes, map[string]any{"id": id, "name": strings.ReplaceAll(id, "_", " "), "value": math.Round(v*1000) / 1000,
			"weight": 1.0 / 13, "evidence": fmt.Sprintf("fixture: %s from a made-up scene", id)})
	}
	lam := math.Round((0.6*prox+0.4*sum/13)*1000) / 1000
	dec := "monitor"
	switch {
	case lam >= 0.75 && d < zoneR:
		dec = "intercept-recommended"
	case lam >= 0.5:
		dec = "alert"
	}
	th := map[string]any{"track_id": tr.ID, "protocols": tr.Protocols,
		"identity": map[string]any{"icao": tr.ICAO, "uas_id": tr.UASID, "operator_id": tr.Operator, "callsign": tr.Callsign},
		"lat":      tr.Lat, "lon": tr.Lon, "alt_m": tr.AltM, "speed_mps": tr.Speed, "heading_deg": tr.Heading,
		"lambda": lam, "decision": dec, "human_decision_required": true, "caps": []string{},
		"axes": axes, "geofence": "lhr", "geofence_name": "Airfield", "breach": d < zoneR, "distance_m": d,
		"distance_to_boundary_m": d - zoneR, "first_seen": tr.First, "last_seen": tr.Last, "receipt_index": tr.receipt}
	if tr.swarm != "" {
		th["swarm_id"] = tr.swarm
	}
	if dec != "intercept-recommended" && d < zoneR {
		th["caps"] = []string{"fixture: corroboration below the intercept floor"}
	}
	return th
}

func (s *scene) boardJSON() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ths []map[string]any
	for _, tr := range s.now() {
		ths = append(ths, s.threat(tr))
	}
	// Sorted by Λ, as the contract says.
	for i := range ths {
		for j := i + 1; j < len(ths); j++ {
			if ths[j]["lambda"].(float64) > ths[i]["lambda"].(float64) {
				ths[i], ths[j] = ths[j], ths[i]
			}
		}
	}
	return map[string]any{"threats": ths, "count": len(ths), "total": len(ths), "generated_at": time.Now().UTC().Format(time.RFC3339Nano),
		"statement": "fixture data: Λ is a decision aid, not a proof of safety"}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail})
}

func (s *scene) tracks(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ts := s.now()
	s.mu.Unlock()
	writeJSON(w, map[string]any{"tracks": ts, "count": len(ts)})
}

func (s *scene) track(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tr := range s.now() {
		if tr.ID == r.PathValue("id") {
			tr.History = s.hist[tr.ID]
			writeJSON(w, tr)
			return
		}
	}
	problem(w, 404, "no track "+r.PathValue("id"))
}

func (s *scene) active(w http.ResponseWriter, r *http.Request) { writeJSON(w, s.boardJSON()) }

func (s *scene) stream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		problem(w, 500, "no flusher")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		b, _ := json.Marshal(s.boardJSON())
		fmt.Fprintf(w, "event: board\ndata: %s\n\n", b)
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func (s *scene) geofences(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"geofences": []map[string]any{
		{"id": "lhr", "name": "Airfield", "class": "airport", "center": []float64{zoneLat, zoneLon}, "radius_m": zoneR, "ceiling_m": 400},
		{"id": "hmp", "name": "Prison", "class": "prison", "polygon": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{
			{-0.50, 51.44}, {-0.48, 51.44}, {-0.48, 51.452}, {-0.50, 51.452}, {-0.50, 51.44}}}}},
	}, "count": 2})
}

func (s *scene) swarms(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ts := s.now()
	s.mu.Unlock()
	var members []string
	var clat, clon float64
	for _, t := range ts {
		if t.swarm != "" {
			members = append(members, t.ID)
			clat += t.Lat
			clon += t.Lon
		}
	}
	n := float64(len(members))
	writeJSON(w, map[string]any{"components": []map[string]any{{"id": "swarm-1", "members": members, "size": len(members),
		"centroid": []float64{clat / n, clon / n}, "radius_m": 60.0, "swarm": true}}, "edges": []any{}, "singletons": []any{}})
}

func (s *scene) checkpoint() (size uint64, root []byte, text string) {
	size = s.tree.Size()
	root = s.tree.Hash()
	text = fmt.Sprintf("fixture.cuasd.invalid/log\n%d\n%s\n", size, base64.StdEncoding.EncodeToString(root))
	return
}

func (s *scene) ledger(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size, root, cp := s.checkpoint()
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 {
		limit = 100
	}
	var entries []map[string]any
	for i := from; i < len(s.envs) && i < from+limit; i++ {
		entries = append(entries, map[string]any{"index": i, "leaf_hash": hex.EncodeToString(s.tree.LeafHash(uint64(i))),
			"envelope": s.envs[i], "time": s.times[i].UTC().Format(time.RFC3339Nano)})
	}
	writeJSON(w, map[string]any{"tree_size": size, "root_hash": hex.EncodeToString(root), "checkpoint": cp, "entries": entries})
}

func (s *scene) checkpointH(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, cp := s.checkpoint()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, cp)
}

func (s *scene) receipt(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, err := strconv.Atoi(r.PathValue("index"))
	if err != nil || i < 0 || i >= len(s.envs) {
		problem(w, 404, "no receipt "+r.PathValue("index"))
		return
	}
	size, root, cp := s.checkpoint()
	pr, _ := s.tree.InclusionProof(uint64(i), size)
	proof := make([]string, len(pr))
	for k, p := range pr {
		proof[k] = hex.EncodeToString(p)
	}
	writeJSON(w, map[string]any{"index": i, "leaf_hash": hex.EncodeToString(s.tree.LeafHash(uint64(i))), "envelope": s.envs[i],
		"tree_size": size, "root_hash": hex.EncodeToString(root), "inclusion_proof": proof, "checkpoint": cp})
}
