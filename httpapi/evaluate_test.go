package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/ledger"
)

// gateFakeLedger records what the evaluate handler appends and answers
// with a receipt shaped like the real ledger's. Only Append is used.
type gateFakeLedger struct {
	mu      sync.Mutex
	appends []gateAppend
	err     error
}

type gateAppend struct {
	subject, predicateType string
	record                 json.RawMessage
}

func (f *gateFakeLedger) Append(ctx context.Context, subject, predicateType string, record json.RawMessage) (ledger.Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return ledger.Receipt{}, f.err
	}
	f.appends = append(f.appends, gateAppend{subject, predicateType, append(json.RawMessage(nil), record...)})
	h := strings.Repeat("ab", 32)
	return ledger.Receipt{
		Index: uint64(len(f.appends) - 1), LeafHash: h, TreeSize: uint64(len(f.appends)), RootHash: h,
		InclusionProof: []string{},
		Envelope: dsse.Envelope{PayloadType: ledger.PayloadType, Payload: "e30=",
			Signatures: []dsse.Signature{{KeyID: "unsigned-placeholder", Sig: ""}}},
		Checkpoint: "fake\n1\nq83vq83vq83vq83vq83vq83vq83vq83vq83vq83vq80=\n",
	}, nil
}

func (f *gateFakeLedger) last(t *testing.T) gateAppend {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.appends) == 0 {
		t.Fatal("nothing appended to the ledger")
	}
	return f.appends[len(f.appends)-1]
}

func (f *gateFakeLedger) Entries(context.Context, uint64, int) ([]ledger.Entry, ledger.Checkpoint, error) {
	return nil, ledger.Checkpoint{}, errors.New("fake")
}
func (f *gateFakeLedger) Receipt(context.Context, uint64) (ledger.Receipt, error) {
	return ledger.Receipt{}, errors.New("fake")
}
func (f *gateFakeLedger) ConsistencyProof(uint64, uint64) ([][]byte, error) {
	return nil, errors.New("fake")
}
func (f *gateFakeLedger) RootAt(uint64) ([]byte, error) { return nil, errors.New("fake") }
func (f *gateFakeLedger) Checkpoint() ledger.Checkpoint { return ledger.Checkpoint{} }
func (f *gateFakeLedger) Keys() []ledger.KeyInfo        { return nil }
func (f *gateFakeLedger) SigningMode() string           { return "unsigned" }

// gateEvalResult is the part of the answer the tests read.
type gateEvalResult struct {
	Breach              bool     `json:"breach"`
	PredictedBreach     bool     `json:"predicted_breach"`
	TimeToBreachS       *float64 `json:"time_to_breach_s"`
	DistanceM           float64  `json:"distance_m"`
	DistanceToBoundaryM float64  `json:"distance_to_boundary_m"`
	BearingDeg          float64  `json:"bearing_deg"`
	Lambda              struct {
		Score float64 `json:"score"`
		Band  string  `json:"band"`
		Axes  []struct {
			ID       string         `json:"id"`
			Value    float64        `json:"value"`
			Weight   float64        `json:"weight"`
			Known    bool           `json:"known"`
			Inputs   map[string]any `json:"inputs"`
			Evidence string         `json:"evidence"`
		} `json:"axes"`
		Caps []struct {
			ID      string `json:"id"`
			Binding bool   `json:"binding"`
		} `json:"caps"`
	} `json:"lambda"`
	Decision              string          `json:"decision"`
	HumanDecisionRequired bool            `json:"human_decision_required"`
	EvaluatedAt           time.Time       `json:"evaluated_at"`
	Receipt               *ledger.Receipt `json:"receipt"`
}

func (r *gateEvalResult) axis(t *testing.T, id string) (float64, bool, string) {
	t.Helper()
	for _, a := range r.Lambda.Axes {
		if a.ID == id {
			return a.Value, a.Known, a.Evidence
		}
	}
	t.Fatalf("axis %s missing", id)
	return 0, false, ""
}

func (r *gateEvalResult) hasCap(id string) bool {
	for _, c := range r.Lambda.Caps {
		if c.ID == id {
			return true
		}
	}
	return false
}

const gateEvalPath = testBase + "/v1/counter-uas/evaluate"

func gateEvaluate(t *testing.T, h http.Handler, body any) gateEvalResult {
	t.Helper()
	rec := do(t, h, "POST", gateEvalPath, body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var r gateEvalResult
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// The Lyon–Paris distance published by mapado/haversine
// (tests/geo_ressources.py, mean radius 6371.0088 km).
const gateLyonParisM = 392217.2595593981

func TestEvaluateSpecShape(t *testing.T) {
	fl := &gateFakeLedger{}
	h := newTestServer(t, Deps{Ledger: fl, Version: "1.2.3"})
	before := time.Now().UTC().Add(-time.Second)
	r := gateEvaluate(t, h, `{"track":{"lat":48.8567,"lon":2.3508,"alt_m":120},"geofence":{"center":[45.7597,4.8422],"radius_m":400000}}`)
	if !r.Breach || !r.HumanDecisionRequired || len(r.Lambda.Axes) != 13 || r.Receipt == nil {
		t.Fatalf("answer %+v", r)
	}
	if math.Abs(r.DistanceM-gateLyonParisM) > 1e-3 || math.Abs(r.DistanceToBoundaryM-(gateLyonParisM-400000)) > 1e-3 {
		t.Errorf("distance %.6f, to boundary %.6f", r.DistanceM, r.DistanceToBoundaryM)
	}
	// Unknown trust inputs always cap the decision below intercept.
	if r.Decision == "intercept-recommended" || !r.hasCap("corroboration") || !r.hasCap("signal-integrity") {
		t.Errorf("decision %s caps %+v", r.Decision, r.Lambda.Caps)
	}
	if r.EvaluatedAt.Before(before) {
		t.Errorf("evaluated_at %v", r.EvaluatedAt)
	}

	a := fl.last(t)
	if a.predicateType != ledger.PredicateTypeGateDecision || !strings.HasPrefix(a.subject, "evaluation") {
		t.Errorf("appended %q %q", a.subject, a.predicateType)
	}
	var rec struct {
		Doctrine       string           `json:"doctrine"`
		ServiceVersion string           `json:"service_version"`
		Time           time.Time        `json:"time"`
		Track          map[string]any   `json:"track"`
		Geofence       map[string]any   `json:"geofence"`
		Lambda         float64          `json:"lambda"`
		Axes           []map[string]any `json:"axes"`
		Caps           []string         `json:"caps"`
		Decision       string           `json:"decision"`
		Human          bool             `json:"human_decision_required"`
	}
	if err := json.Unmarshal(a.record, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Doctrine != "v11" || rec.ServiceVersion != "1.2.3" || rec.Time.Before(before) || !rec.Human {
		t.Errorf("record header %+v", rec)
	}
	if rec.Track["lat"] != 48.8567 || rec.Geofence["radius_m"] != 400000.0 {
		t.Errorf("record inputs %v %v", rec.Track, rec.Geofence)
	}
	if len(rec.Axes) != 13 || rec.Lambda != r.Lambda.Score || rec.Decision != r.Decision || len(rec.Caps) != len(r.Lambda.Caps) {
		t.Errorf("record result %+v", rec)
	}
	for i, ax := range rec.Axes {
		if ax["id"] != r.Lambda.Axes[i].ID || ax["value"] != r.Lambda.Axes[i].Value {
			t.Errorf("record axis %d %v differs from the answer", i, ax)
		}
	}
}

func TestEvaluateInsideOnOutside(t *testing.T) {
	h := newTestServer(t, Deps{Ledger: &gateFakeLedger{}})
	for _, tc := range []struct {
		name   string
		radius float64
		breach bool
	}{{"on", gateLyonParisM, true}, {"inside by 1 m", gateLyonParisM + 1, true}, {"outside by 1 m", gateLyonParisM - 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"track":{"lat":48.8567,"lon":2.3508},"geofence":{"center":[45.7597,4.8422],"radius_m":%.10f}}`, tc.radius)
			r := gateEvaluate(t, h, body)
			if r.Breach != tc.breach {
				t.Errorf("%s: breach %v", tc.name, r.Breach)
			}
			if v, known, ev := r.axis(t, "altitude"); known || v != 0.5 || !strings.HasPrefix(ev, "unknown") {
				t.Errorf("%s: without alt_m the altitude axis must be unknown: %v %v %q", tc.name, v, known, ev)
			}
		})
	}
}

func TestEvaluateValidation(t *testing.T) {
	h := newTestServer(t, Deps{Ledger: &gateFakeLedger{}})
	good := `"geofence":{"center":[51.47,-0.45],"radius_m":5000}`
	tests := []struct {
		name   string
		body   string
		status int
		fields []string
	}{
		{"no track", `{` + good + `}`, 400, []string{"track"}},
		{"no geofence", `{"track":{"lat":1,"lon":2}}`, 400, []string{"geofence"}},
		{"lat and lon missing", `{"track":{}, ` + good + `}`, 400, []string{"track.lat", "track.lon"}},
		{"lat out of range", `{"track":{"lat":90.5,"lon":0},` + good + `}`, 400, []string{"track.lat"}},
		{"lon out of range", `{"track":{"lat":0,"lon":-180.01},` + good + `}`, 400, []string{"track.lon"}},
		{"every field at once", `{"track":{"lat":-91,"lon":181,"speed_mps":-1,"heading_deg":400,"side":"hostile","sensors":0},"geofence":{"center":[91,0],"radius_m":0}}`,
			400, []string{"track.lat", "track.lon", "track.speed_mps", "track.heading_deg", "track.side", "track.sensors", "geofence.center[0]", "geofence.radius_m"}},
		{"radius too big", `{"track":{"lat":0,"lon":0},"geofence":{"center":[0,0],"radius_m":1000000.5}}`, 400, []string{"geofence.radius_m"}},
		{"radius max", `{"track":{"lat":0,"lon":0},"geofence":{"center":[0,0],"radius_m":1000000}}`, 200, nil},
		{"center of 3", `{"track":{"lat":0,"lon":0},"geofence":{"center":[0,0,0],"radius_m":10}}`, 400, []string{"geofence.center"}},
		{"number overflow", `{"track":{"lat":1e999,"lon":0},` + good + `}`, 400, []string{"track.lat"}},
		{"string for number", `{"track":{"lat":"north","lon":0},` + good + `}`, 400, []string{"track.lat"}},
		{"unknown field", `{"track":{"lat":0,"lon":0,"colour":"red"},` + good + `}`, 400, []string{"colour"}},
		{"both geofences", `{"track":{"lat":0,"lon":0},"geofence_id":"x",` + good + `}`, 400, []string{"geofence_id"}},
		{"geofence_id without store", `{"track":{"lat":0,"lon":0},"geofence_id":"x"}`, 400, []string{"geofence_id"}},
		{"sensors without protocols", `{"track":{"lat":0,"lon":0,"sensors":2},` + good + `}`, 400, []string{"track.protocols"}},
		{"not json", `{"track":`, 400, nil},
		{"history out of order", `{"track":{"lat":0,"lon":0,"history":[{"t":"2025-01-01T00:00:02Z","lat":0,"lon":0},{"t":"2025-01-01T00:00:01Z","lat":0,"lon":0}]},` + good + `}`,
			400, []string{"track.history[1].t"}},
		{"history bad sample", `{"track":{"lat":0,"lon":0,"history":[{"lat":95}]},` + good + `}`,
			400, []string{"track.history[0].t", "track.history[0].lat", "track.history[0].lon"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, "POST", gateEvalPath, tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == 200 {
				return
			}
			p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), tc.status)
			var got []string
			for _, e := range p.Errors {
				got = append(got, e.Field)
			}
			for _, f := range tc.fields {
				if !slices.Contains(got, f) {
					t.Errorf("field %q not named; got %v (%s)", f, got, p.Detail)
				}
			}
		})
	}
	rec := do(t, h, "POST", gateEvalPath, nil)
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("no body, no content type: %d", rec.Code)
	}
}

func TestEvaluateLedgerAbsentOrFailing(t *testing.T) {
	body := `{"track":{"lat":0,"lon":0},"geofence":{"center":[0,0],"radius_m":10}}`
	rec := do(t, newTestServer(t, Deps{}), "POST", gateEvalPath, body)
	assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)

	failing := &gateFakeLedger{err: errors.New("disk on fire")}
	rec = do(t, newTestServer(t, Deps{Ledger: failing}), "POST", gateEvalPath, body)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("ledger storage failure: %d %s", rec.Code, rec.Body)
	}
	failing.err = &ledger.Error{Kind: ledger.KindTooLarge}
	rec = do(t, newTestServer(t, Deps{Ledger: failing}), "POST", gateEvalPath, body)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("ledger refusing our record: %d %s", rec.Code, rec.Body)
	}
}

// An intercept-recommended case with every optional input: a fast
// adversary inside an airport zone, heard by two sensors.
func TestEvaluateAllInputs(t *testing.T) {
	fl := &gateFakeLedger{}
	h := newTestServer(t, Deps{Ledger: fl})
	body := map[string]any{
		"track": map[string]any{"id": "rid-X1", "lat": 51.4700, "lon": -0.4543, "alt_m": 60, "height_agl_m": 60,
			"speed_mps": 20, "heading_deg": 90, "vertical_rate_mps": 0,
			"identity": map[string]any{"uas_id": "X1"}, "side": "adversary", "swarm_size": 4,
			"sensors": 2, "protocols": 1, "evidence_age_s": 1, "warnings": []string{},
			"compliance": map[string]any{"remote_id": false, "operator_location": false, "emergency": false},
			"history":    gateCircling(51.4700, -0.4543)},
		"geofence": map[string]any{"name": "Heathrow", "class": "airport", "center": []float64{51.47, -0.4543},
			"radius_m": 5000, "floor_m": 0, "ceiling_m": 150},
	}
	r := gateEvaluate(t, h, body)
	if r.Decision != "intercept-recommended" || len(r.Lambda.Caps) != 0 || !r.HumanDecisionRequired {
		t.Fatalf("decision %s Λ %.3f caps %+v", r.Decision, r.Lambda.Score, r.Lambda.Caps)
	}
	for _, a := range r.Lambda.Axes {
		if !a.Known {
			t.Errorf("axis %s unknown with every input given: %s", a.ID, a.Evidence)
		}
	}
	if v, _, ev := r.axis(t, "behaviour"); v < 0.95 || !strings.Contains(ev, "circling") {
		t.Errorf("behaviour from the circling history: %v %q", v, ev)
	}
	if s := fl.last(t).subject; s != "track:rid-X1" {
		t.Errorf("subject %q", s)
	}
	if r.TimeToBreachS == nil || *r.TimeToBreachS != 0 {
		t.Errorf("time to breach %v", r.TimeToBreachS)
	}
}

// gateCircling is a two-minute history of a drone circling a point twice.
func gateCircling(lat, lon float64) []map[string]any {
	var h []map[string]any
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; i <= 72; i++ {
		p := gate.Destination(gate.Point{Lat: lat, Lon: lon}, 100, float64(i)*10)
		h = append(h, map[string]any{"t": t0.Add(time.Duration(i) * 1666666667).Format(time.RFC3339Nano), "lat": p.Lat, "lon": p.Lon})
	}
	return h
}

// gateFakeZones is an in-memory ZoneStore.
type gateFakeZones struct {
	mu     sync.Mutex
	fences map[string]gate.Geofence
	allow  gate.AllowList
	err    error
}

func newFakeZones() *gateFakeZones { return &gateFakeZones{fences: map[string]gate.Geofence{}} }

func (z *gateFakeZones) Geofences(context.Context) ([]gate.Geofence, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.err != nil {
		return nil, z.err
	}
	var out []gate.Geofence
	for _, g := range z.fences {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b gate.Geofence) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
func (z *gateFakeZones) Geofence(_ context.Context, id string) (gate.Geofence, bool, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	g, ok := z.fences[id]
	return g, ok, z.err
}
func (z *gateFakeZones) PutGeofence(_ context.Context, g gate.Geofence) (bool, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.err != nil {
		return false, z.err
	}
	_, had := z.fences[g.ID]
	z.fences[g.ID] = g
	return !had, nil
}
func (z *gateFakeZones) DeleteGeofence(_ context.Context, id string) (bool, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	_, had := z.fences[id]
	delete(z.fences, id)
	return had, z.err
}
func (z *gateFakeZones) AllowList(context.Context) (gate.AllowList, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.allow, z.err
}
func (z *gateFakeZones) PutAllowList(_ context.Context, a gate.AllowList) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.allow = a.Normalize()
	return z.err
}
func (z *gateFakeZones) MatchAllowList(_ context.Context, id gate.Identity) (gate.AllowStatus, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	st, _ := gate.NewAllowIndex(z.allow).Match(id)
	return st, z.err
}

func TestEvaluateAllowListAndStoredGeofence(t *testing.T) {
	zs := newFakeZones()
	zs.fences["egll"] = gate.Geofence{ID: "egll", Class: gate.ClassAirport, Center: []float64{51.47, -0.4543}, RadiusM: 5000}
	zs.allow = gate.AllowList{ICAO: []string{"4CA2D1"}}
	h := newTestServer(t, Deps{Ledger: &gateFakeLedger{}, Zones: zs})

	listed := gateEvaluate(t, h, `{"track":{"lat":51.47,"lon":-0.45,"identity":{"icao":"4ca2d1"}},"geofence_id":"egll"}`)
	other := gateEvaluate(t, h, `{"track":{"lat":51.47,"lon":-0.45,"identity":{"icao":"ABCDEF"}},"geofence_id":"egll"}`)
	if v, _, ev := listed.axis(t, "identity"); v != 0 || !strings.Contains(ev, "allow-listed") {
		t.Errorf("allow-listed identity axis %v %q", v, ev)
	}
	if !listed.hasCap("allow-listed") || other.hasCap("allow-listed") {
		t.Error("allow-listed cap")
	}
	if listed.Lambda.Score > other.Lambda.Score {
		t.Errorf("allow-listing raised Λ: %v > %v", listed.Lambda.Score, other.Lambda.Score)
	}
	if v, _, _ := listed.axis(t, "zone_sensitivity"); v != 1 {
		t.Errorf("stored airport geofence not used: sensitivity %v", v)
	}
	rec := do(t, h, "POST", gateEvalPath, `{"track":{"lat":0,"lon":0},"geofence_id":"nope"}`)
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown geofence_id: %d", rec.Code)
	}
}

func TestEvaluateLargePolygonRecordedByDigest(t *testing.T) {
	fl := &gateFakeLedger{}
	h := newTestServer(t, Deps{Ledger: fl})
	ring := make([][]float64, 0, 2001)
	for i := range 2000 {
		p := gate.Destination(gate.Point{Lat: 10, Lon: 10}, 3000, float64(i)*360/2000)
		ring = append(ring, []float64{p.Lon, p.Lat})
	}
	ring = append(ring, ring[0])
	body := map[string]any{"track": map[string]any{"lat": 10, "lon": 10},
		"geofence": map[string]any{"polygon": map[string]any{"type": "Polygon", "coordinates": [][][]float64{ring}}}}
	r := gateEvaluate(t, h, body)
	if !r.Breach || math.Abs(r.DistanceToBoundaryM+3000) > 1 {
		t.Errorf("inside a 3 km polygon: breach %v, %v m", r.Breach, r.DistanceToBoundaryM)
	}
	rec := fl.last(t).record
	if len(rec) > ledger.MaxRecordBytes || !strings.Contains(string(rec), `"sha256"`) {
		t.Errorf("record of %d bytes; a large polygon must be recorded by digest", len(rec))
	}

	// The largest history and the most warnings still make a record the
	// ledger accepts.
	var hist []map[string]any
	for i := range 10_000 {
		hist = append(hist, map[string]any{"t": time.Unix(int64(i), 0).UTC().Format(time.RFC3339), "lat": 10.0, "lon": 10.0})
	}
	var warns []string
	for range 100 {
		warns = append(warns, strings.Repeat("w", 128))
	}
	body["track"] = map[string]any{"lat": 10, "lon": 10, "history": hist, "warnings": warns,
		"id": strings.Repeat("i", 256), "identity": map[string]any{"uas_id": strings.Repeat("u", 64), "icao": strings.Repeat("c", 64), "operator_id": strings.Repeat("o", 64)}}
	gateEvaluate(t, h, body)
	rec = fl.last(t).record
	if len(rec) > ledger.MaxRecordBytes || !strings.Contains(string(rec), `"positions":10000`) {
		t.Errorf("record of %d bytes with the largest inputs", len(rec))
	}
}

// With the real ledger, the receipt's statement carries our record as its
// predicate.
func TestEvaluateRealLedgerReceipt(t *testing.T) {
	l := newTestLedger(t, true)
	h := newTestServer(t, Deps{Ledger: l, Version: "test"})
	r := gateEvaluate(t, h, `{"track":{"id":"T1","lat":0,"lon":0},"geofence":{"center":[0,0],"radius_m":10}}`)
	st, err := ledger.DecodeStatement(&r.Receipt.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	if st.PredicateType != ledger.PredicateTypeGateDecision || len(st.Subject) != 1 || st.Subject[0].Name != "track:T1" {
		t.Errorf("statement %+v", st)
	}
	var pred struct {
		Decision string  `json:"decision"`
		Lambda   float64 `json:"lambda"`
		Doctrine string  `json:"doctrine"`
	}
	if err := json.Unmarshal(st.Predicate, &pred); err != nil {
		t.Fatal(err)
	}
	if pred.Decision != r.Decision || pred.Lambda != r.Lambda.Score || pred.Doctrine != "v11" {
		t.Errorf("predicate %+v, answer %s %v", pred, r.Decision, r.Lambda.Score)
	}
}
