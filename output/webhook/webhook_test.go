package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/internal/testlog"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/alert"
)

// receiver is a real HTTP server that fails the first `fail` requests
// with status code and then accepts, recording what it got.
type receiver struct {
	mu   sync.Mutex
	fail int
	code int
	got  []request
	ok   chan request
}

type request struct {
	id, state, sig string
	body           []byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	rq := request{req.Header.Get(HeaderID), req.Header.Get(HeaderState), req.Header.Get(HeaderSignature), b}
	r.mu.Lock()
	r.got = append(r.got, rq)
	n := len(r.got)
	r.mu.Unlock()
	if req.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	if n <= r.fail {
		w.WriteHeader(r.code)
		return
	}
	r.ok <- rq
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.got...)
}

const secret = "test-secret-not-real"

// start runs the rule engine and the webhook sink of c on a test NATS.
func start(t testing.TB, c *alert.Config) (*natstest.Server, *alert.Store) {
	t.Helper()
	return startLogged(t, c, slog.New(slog.DiscardHandler))
}

// startLogged is start with the sinks logging to log.
func startLogged(t testing.TB, c *alert.Config, log *slog.Logger) (*natstest.Server, *alert.Store) {
	t.Helper()
	ns := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	quiet := slog.New(slog.DiscardHandler)
	rules, store, err := alert.Open(ctx, ns.JetStream(), c, alert.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	ev := output.Conn(ns.Conn)
	outs := []output.Output{rules}
	for _, s := range c.Sinks {
		o, err := NewOutput(s, alert.Deliverer{JS: ns.JetStream(), Store: store, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	for _, o := range outs {
		up := &upReporter{up: make(chan struct{})}
		wg.Go(func() {
			if err := o.Run(ctx, ev, up); err != nil {
				t.Errorf("%s: %v", o.Name(), err)
			}
		})
		// Up means subscribed: an event published now is seen.
		select {
		case <-up.up:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never up", o.Name())
		}
	}
	return ns, store
}

// upReporter closes up the first time the output reports Up.
type upReporter struct {
	once sync.Once
	up   chan struct{}
}

func (r *upReporter) Up()            { r.once.Do(func() { close(r.up) }) }
func (r *upReporter) Retrying(error) {}

func config(t testing.TB, url, extra string) *alert.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	y := "sinks:\n  - name: hook\n    webhook: " + url + "\n    secret_file: " + filepath.Join(dir, "s") + "\n" + extra +
		"rules:\n  - name: breach\n    zones: [demo-site]\n    sinks: [hook]\n"
	c, err := alert.Parse("t.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve("t.yaml", nil, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// publishThreat publishes a breach decision the way the gate does.
func publishThreat(t testing.TB, ns *natstest.Server, track string, receipt int64) {
	t.Helper()
	alt := 120.0
	ev := events.ThreatEvent{Header: events.Header{V: events.Version, Type: events.TypeThreat, Time: time.Now().UTC(), Instance: "t"},
		Reason: "breach_started", PreviousDecision: "monitor", Threat: events.Threat{TrackID: track, Protocols: []string{"remoteid"},
			Identity: events.Identity{UASID: "1581F5FJD2"}, Lat: 52.3, Lon: 4.76, AltM: &alt, Lambda: 0.8, Decision: "alert",
			HumanDecision: true, Geofence: "demo-site", GeofenceName: "Schiphol (demo)", Breach: true, ReceiptIndex: &receipt}}
	b, _ := json.Marshal(ev)
	p, k, _ := strings.Cut(track, ":")
	if err := ns.Conn.Publish(bus.ThreatSubject(p, k), b); err != nil {
		t.Fatal(err)
	}
}

func waitRecord(t *testing.T, st *alert.Store, id string, want func(alert.Record) bool) alert.Record {
	t.Helper()
	for range 200 {
		r, ok, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok && want(r) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
	r, _, _ := st.Get(context.Background(), id)
	t.Fatalf("record %s never reached the wanted state: %+v", id, r)
	return r
}

func TestRetriedUntilAcceptedSameIDValidSignature(t *testing.T) {
	rc := &receiver{fail: 2, code: http.StatusInternalServerError, ok: make(chan request, 4)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ns, store := start(t, config(t, srv.URL+"/cuas", ""))
	publishThreat(t, ns, "remoteid:1581F5FJD2", 7)
	var got request
	select {
	case got = <-rc.ok:
	case <-time.After(30 * time.Second):
		t.Fatalf("not delivered; receiver saw %d requests", len(rc.requests()))
	}
	all := rc.requests()
	if len(all) != 3 {
		t.Fatalf("%d requests, want 2 failures and 1 success", len(all))
	}
	for i, r := range all {
		if r.id != got.id || string(r.body) != string(got.body) || !Verify([]byte(secret), r.body, r.sig) {
			t.Errorf("request %d: id %q sig ok %v; body changed %v", i, r.id, Verify([]byte(secret), r.body, r.sig), string(r.body) != string(got.body))
		}
	}
	if Verify([]byte("other"), got.body, got.sig) {
		t.Error("signature verifies under another secret")
	}
	var m map[string]any
	if err := json.Unmarshal(got.body, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "state", "rule", "zone", "track", "lambda", "decision", "human_decision_required", "receipt", "alert_type", "severity", "title", "message", "timestamp"} {
		if _, ok := m[k]; !ok {
			t.Errorf("body has no %q", k)
		}
	}
	if m["id"] != got.id || m["state"] != "open" || m["human_decision_required"] != true || got.state != "open" {
		t.Errorf("body: %s", got.body)
	}
	if r := m["receipt"].(map[string]any); r["index"] != 7.0 || r["url"] != "/v1/receipt/7" {
		t.Errorf("receipt %v", r)
	}
	rec := waitRecord(t, store, got.id, func(r alert.Record) bool { return r.Deliveries[0].Status == alert.Delivered })
	if d := rec.Deliveries[0]; d.Sink != "hook" || d.Attempts != 3 {
		t.Errorf("delivery %+v, want hook after 3 attempts", d)
	}
}

// A receiver that is down is logged once when deliveries start failing and
// once when they succeed again, however many alerts and attempts lie
// between (an hour's outage retried every alert every 5 minutes).
func TestOutageIsLoggedOncePerStateChange(t *testing.T) {
	rc := &receiver{fail: 4, code: http.StatusServiceUnavailable, ok: make(chan request, 4)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	var logs testlog.Buffer
	ns, _ := startLogged(t, config(t, srv.URL+"/cuas", ""), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	publishThreat(t, ns, "remoteid:1581F5FJD2", 7)
	publishThreat(t, ns, "remoteid:1581F5FJD3", 8)
	for range 2 {
		select {
		case <-rc.ok:
		case <-time.After(30 * time.Second):
			t.Fatalf("not delivered; receiver saw %d requests", len(rc.requests()))
		}
	}
	if n := len(rc.requests()); n < 5 {
		t.Fatalf("%d requests, want at least 4 failures and 2 deliveries", n)
	}
	// The receiver has both; the deliverer logs "delivering again" once its
	// first successful send is acknowledged and recorded, which under load
	// can come after the second send.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), "delivering again") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	text := logs.String()
	if n := strings.Count(text, "will retry"); n != 1 {
		t.Errorf("%d 'will retry' lines at info level, want 1:\n%s", n, text)
	}
	if n := strings.Count(text, "delivering again"); n != 1 {
		t.Errorf("%d 'delivering again' lines, want 1:\n%s", n, text)
	}
}

func TestRefusedIsFailedAtOnce(t *testing.T) {
	rc := &receiver{fail: 100, code: http.StatusBadRequest, ok: make(chan request, 1)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ns, store := start(t, config(t, srv.URL, ""))
	publishThreat(t, ns, "remoteid:X", 1)
	list := waitList(t, store)
	rec := waitRecord(t, store, list[0].ID, func(r alert.Record) bool { return r.Deliveries[0].Status == alert.Failed })
	if d := rec.Deliveries[0]; d.Attempts != 1 || !strings.Contains(d.LastError, "400") {
		t.Errorf("delivery %+v", d)
	}
}

func TestGivesUpAfterAge(t *testing.T) {
	rc := &receiver{fail: 100, code: http.StatusServiceUnavailable, ok: make(chan request, 1)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ns, store := start(t, config(t, srv.URL, "    give_up: 1ms\n"))
	publishThreat(t, ns, "remoteid:Y", 1)
	list := waitList(t, store)
	rec := waitRecord(t, store, list[0].ID, func(r alert.Record) bool { return r.Deliveries[0].Status == alert.Failed })
	if d := rec.Deliveries[0]; !strings.Contains(d.LastError, "503") || strings.Contains(d.LastError, srv.URL) {
		t.Errorf("delivery %+v (the error must name the host only)", d)
	}
}

func waitList(t *testing.T, st *alert.Store) []alert.Record {
	t.Helper()
	for range 200 {
		l, err := st.List(context.Background(), alert.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l) > 0 {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no alert recorded")
	return nil
}

func TestTLSWithCAFileAndSlackFormat(t *testing.T) {
	rc := &receiver{ok: make(chan request, 1)}
	srv := httptest.NewTLSServer(rc)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ns, _ := start(t, config(t, srv.URL, "    ca_file: "+ca+"\n    format: slack\n"))
	publishThreat(t, ns, "remoteid:Z", 3)
	select {
	case got := <-rc.ok:
		var m map[string]string
		if err := json.Unmarshal(got.body, &m); err != nil || !strings.Contains(m["text"], "Schiphol (demo)") || !strings.Contains(m["text"], "receipt 3") {
			t.Errorf("slack body %s (%v)", got.body, err)
		}
		if !Verify([]byte(secret), got.body, got.sig) {
			t.Error("slack body not signed")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("not delivered over TLS")
	}
}

func TestUntrustedTLSIsRetriedNotSent(t *testing.T) {
	rc := &receiver{ok: make(chan request, 1)}
	srv := httptest.NewTLSServer(rc)
	defer srv.Close()
	s, err := New(config(t, srv.URL, "").Sinks[0])
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(context.Background(), &alert.Message{ID: "al-00"}, []byte("{}"))
	if err == nil || strings.Contains(err.Error(), "Permanent") || len(rc.requests()) != 0 {
		t.Fatalf("got %v, %d requests", err, len(rc.requests()))
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"id":"al-1"}`)
	sig := Sign([]byte("k"), body)
	for _, tc := range []struct {
		name, sig string
		body      []byte
		want      bool
	}{
		{"good", sig, body, true},
		{"no prefix", strings.TrimPrefix(sig, "sha256="), body, false},
		{"changed body", sig, []byte(`{"id":"al-2"}`), false},
		{"not hex", "sha256=zz", body, false},
		{"empty", "", body, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Verify([]byte("k"), tc.body, tc.sig); got != tc.want {
				t.Errorf("Verify = %v", got)
			}
		})
	}
}

func ExampleVerify() {
	// A receiver checks the signature over the raw body before parsing it.
	body := []byte(`{"id":"al-0123","state":"open"}`)
	header := Sign([]byte("shared secret"), body) // what cuasd sent in X-Cuas-Signature
	fmt.Println(Verify([]byte("shared secret"), body, header))
	fmt.Println(Verify([]byte("shared secret"), append(body, ' '), header)) // one byte changed
	// Output:
	// true
	// false
}

func TestSendClassifiesAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		code      int
		slow      bool
		retry, ok bool
	}{
		{"200", 200, false, false, true},
		{"204", 204, false, false, true},
		{"429", 429, false, true, false},
		{"408", 408, false, true, false},
		{"502", 502, false, true, false},
		{"400", 400, false, false, false},
		{"401", 401, false, false, false},
		{"redirect not followed", 302, false, false, false},
		{"timeout", 200, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.slow {
					<-release
				}
				if tc.code == 302 {
					w.Header().Set("Location", "http://elsewhere.example/")
				}
				w.WriteHeader(tc.code)
			}))
			defer srv.Close()
			defer close(release)
			c := config(t, srv.URL+"/secret-path?token=abc", "    timeout: 200ms\n").Sinks[0]
			s, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Send(context.Background(), &alert.Message{ID: "al-01", State: "open"}, []byte(`{}`))
			isPerm := alert.IsPermanent(err)
			switch {
			case tc.ok && err != nil, !tc.ok && err == nil:
				t.Fatalf("err %v", err)
			case err != nil && tc.retry == isPerm:
				t.Fatalf("err %v: permanent %v, want retry %v", err, isPerm, tc.retry)
			case err != nil && (strings.Contains(err.Error(), "secret-path") || strings.Contains(err.Error(), "abc")):
				t.Fatalf("the error shows the URL: %v", err)
			}
		})
	}
}

func TestSendConnectionRefusedIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close() // nothing listens there now
	s, err := New(config(t, u+"/hook/TOKEN", "").Sinks[0])
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(context.Background(), &alert.Message{ID: "al-01"}, []byte(`{}`))
	if err == nil || alert.IsPermanent(err) || strings.Contains(err.Error(), "TOKEN") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("got %v", err)
	}
}

// TestResponseAfterItsDeadlineCounts: a POST sent as its attempt's
// deadline passes (a process resuming from a stall longer than the
// deadline) is answered by a real HTTP receiver within alert.AckGrace:
// the delivery counts, so the alert is not retried and delivered twice
// (issue 32). Without the grace Send failed with the context's error.
func TestResponseAfterItsDeadlineCounts(t *testing.T) {
	rc := &receiver{ok: make(chan request, 2)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	s, err := New(config(t, srv.URL, "").Sinks[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	<-ctx.Done()
	if err := s.Send(ctx, &alert.Message{ID: "al-late", State: "open"}, []byte(`{}`)); err != nil {
		t.Fatalf("a response within the grace after the deadline: %v", err)
	}
	if n := len(rc.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
