package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/cuasd/cuasd/gate"
)

// gatePile is n tracks within a few metres of one point: every pair is a
// link, the input that made the endpoint quadratic in time and answer.
func gatePile(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		p := gate.Destination(gate.Point{Lat: 51.5, Lon: -0.12}, float64(i%7), float64(i%360))
		out[i] = map[string]any{"id": fmt.Sprintf("t%05d", i), "lat": p.Lat, "lon": p.Lon}
	}
	return out
}

// TestSwarmTopologyEdgesArePaged: 2,000 tracks at one point have
// 1,999,000 links; the answer used to list them all (hundreds of MB for a
// few thousand tracks). Now a page is at most max_edges, and the pages
// join up to exactly the links (issue 23, item 3).
func TestSwarmTopologyEdgesArePaged(t *testing.T) {
	h := newTestServer(t, Deps{})
	rec := do(t, h, "POST", gateSwarmPath, map[string]any{"tracks": gatePile(2000)})
	var a struct {
		gateSwarmAnswer
		Next *int `json:"next_edge_offset"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != 200 {
		t.Fatalf("%d %.300s", rec.Code, rec.Body)
	}
	if a.EdgeCount != 2000*1999/2 || len(a.Edges) > 10_000 || a.Next == nil || *a.Next != len(a.Edges) {
		t.Fatalf("edge_count %d, %d edges listed, next %v: want all counted, at most 10000 listed and a next offset",
			a.EdgeCount, len(a.Edges), a.Next)
	}
	if len(a.Components) != 1 || a.Components[0].Size != 2000 {
		t.Errorf("components %d", len(a.Components))
	}

	// Small enough to walk: 60 tracks, 1,770 links in pages of 500.
	seen := map[[2]string]bool{}
	offset, pages := 0, 0
	for {
		rec := do(t, h, "POST", gateSwarmPath, map[string]any{"tracks": gatePile(60), "max_edges": 500, "edge_offset": offset})
		var p struct {
			gateSwarmAnswer
			Next *int `json:"next_edge_offset"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != 200 {
			t.Fatalf("page at %d: %d %.300s", offset, rec.Code, rec.Body)
		}
		pages++
		for _, e := range p.Edges {
			k := [2]string{e.A, e.B}
			if seen[k] {
				t.Fatalf("link %v on two pages", k)
			}
			seen[k] = true
		}
		if p.Next == nil {
			break
		}
		offset = *p.Next
	}
	if len(seen) != 60*59/2 || pages != 4 {
		t.Errorf("%d distinct links over %d pages, want 1770 over 4", len(seen), pages)
	}
	for _, bad := range []map[string]any{{"max_edges": 0}, {"max_edges": 100_001}, {"edge_offset": -1}} {
		bad["tracks"] = gatePile(3)
		if rec := do(t, h, "POST", gateSwarmPath, bad); rec.Code != http.StatusBadRequest {
			t.Errorf("%v: %d %s", bad, rec.Code, rec.Body)
		}
	}
}

// TestSwarmTopologyOverBudget: 30,000 tracks at one point need 450 million
// pair tests; the request is refused with a 422 naming the way out, after
// a bounded amount of work, instead of running for minutes (issue 23,
// item 3).
func TestSwarmTopologyOverBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 30,000 tracks")
	}
	h := newTestServer(t, Deps{})
	rec := do(t, h, "POST", gateSwarmPath, map[string]any{"tracks": gatePile(30_000)})
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("%d %.300s, want 422", rec.Code, rec.Body)
	}
	p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusUnprocessableEntity)
	if len(p.Errors) == 0 || p.Errors[0].Field != "tracks" {
		t.Errorf("problem %+v does not name tracks", p)
	}
	// The same pile with a link distance that links nothing is cheap.
	rec = do(t, h, "POST", gateSwarmPath, map[string]any{"tracks": gatePile(30_000)[:3], "link_m": 0.001})
	if rec.Code != 200 {
		t.Errorf("tiny link_m: %d", rec.Code)
	}
}

// benchSwarmBody is n tracks spread like the swarm package's benchmark:
// 100 km square, a fifth in tight groups.
func benchSwarmBody(b testing.TB, n int) []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	tracks := make([]map[string]any, 0, n)
	for len(tracks) < n {
		q := gate.Point{Lat: 51.5 + (rng.Float64()-0.5)*0.9, Lon: -0.12 + (rng.Float64()-0.5)*1.44}
		k := 1
		if rng.IntN(5) == 0 {
			k = 5 + rng.IntN(16)
		}
		for i := 0; i < k && len(tracks) < n; i++ {
			p := gate.Destination(q, rng.Float64()*120, rng.Float64()*360)
			tracks = append(tracks, map[string]any{"id": fmt.Sprintf("t%06d", len(tracks)), "lat": p.Lat, "lon": p.Lon, "alt_m": 60})
		}
	}
	body, err := json.Marshal(map[string]any{"tracks": tracks})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// discardWriter is a ResponseWriter that counts the answer and keeps
// none of it, as a server writing to its connection does; an
// httptest.ResponseRecorder's growing buffer would add about 12 MB a
// request to what the benchmark counts.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// BenchmarkSwarmTopologyPost100k serves POST /v1/swarm/topology with
// 100,000 tracks end to end (decode, validate, group, encode); alloc-MB
// is what one request allocates in all (an upper bound on its peak heap).
func BenchmarkSwarmTopologyPost100k(b *testing.B) {
	body := benchSwarmBody(b, 100_000)
	h := newTestServer(b, Deps{})
	var peak, heapPeak uint64
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		stop := sampleHeap()
		req := httptest.NewRequest("POST", gateSwarmPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := &discardWriter{h: http.Header{}, code: 200}
		h.ServeHTTP(rec, req)
		hp := stop()
		runtime.ReadMemStats(&m1)
		if rec.code != 200 || rec.n == 0 {
			b.Fatalf("%d, %d bytes", rec.code, rec.n)
		}
		peak = max(peak, m1.TotalAlloc-m0.TotalAlloc)
		heapPeak = max(heapPeak, hp-min(hp, m0.HeapAlloc))
	}
	b.ReportMetric(float64(peak)/(1<<20), "alloc-MB/op")
	b.ReportMetric(float64(heapPeak)/(1<<20), "peak-heap-MB/op")
}

// sampleHeap reads the heap's object bytes (live and not yet swept) every
// millisecond until the returned function is called, which returns the
// largest reading: the request's peak heap, seen at 1 ms resolution.
func sampleHeap() (stop func() uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, out := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-out }
}

// TestSwarmTopologyLimitsAndMemory: more than 100,000 tracks is a 413
// problem naming tracks, and the largest request allowed leaves nothing
// behind: the heap after it is where it was before (the server was left
// at 13.7 GB by 10,000 tracks; issue 23, item 3).
func TestSwarmTopologyLimitsAndMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 100,000 tracks")
	}
	h := newTestServer(t, Deps{})
	post := func(body []byte) (code, n int, ctype string) {
		req := httptest.NewRequest("POST", gateSwarmPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Len(), rec.Header().Get("Content-Type")
	}
	body := benchSwarmBody(t, 100_000)
	post(body) // the first request sizes the server's lasting state, if any
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // and once more for what sync.Pools held
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	code, n, _ := post(body)
	after := heap()
	runtime.KeepAlive(body) // held across both measurements
	if code != 200 || n == 0 {
		t.Fatalf("100,000 tracks: %d, %d bytes", code, n)
	}
	if grown := int64(after) - int64(before); grown > 2<<20 {
		t.Errorf("the heap grew by %.1f MB over a 100,000-track request and stayed so", float64(grown)/(1<<20))
	}
	code, _, ctype := post(benchSwarmBody(t, 100_001))
	if code != http.StatusRequestEntityTooLarge || ctype != "application/problem+json" {
		t.Errorf("100,001 tracks: %d %s, want 413 problem+json", code, ctype)
	}
}
