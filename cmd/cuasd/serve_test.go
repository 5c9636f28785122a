package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/lifecycle"
)

// startServe runs `cuasd serve` in-process on a temporary data dir with
// ephemeral ports and returns the base URL once it is serving.
func startServe(t *testing.T, extra ...string) (baseURL string, stop func()) {
	t.Helper()
	base, _, stop := startServeLines(t, extra...)
	return base, stop
}

// startServeLines is startServe that also returns the lines printed before
// the "serving" line (adapter addresses).
func startServeLines(t *testing.T, extra ...string) (baseURL string, before []string, stop func()) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	args := append([]string{"serve", "--data-dir", dir, "--http-addr", "127.0.0.1:0",
		"--nats-listen", "off", "--log-level", "warn"}, extra...)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, func(string) string { return "" }, pw, io.Discard)
		pw.Close()
	}()
	lines := make(chan string, 1)
	var pre []string
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "cuasd serving ") {
				lines <- strings.TrimPrefix(sc.Text(), "cuasd serving ")
			} else {
				pre = append(pre, sc.Text())
			}
		}
	}()
	select {
	case u := <-lines:
		baseURL = strings.TrimSuffix(u, "/")
		before = pre
		awaitReady(baseURL)
	case err := <-done:
		cancel()
		t.Fatalf("serve exited early: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return baseURL, before, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not shut down")
		}
	}
}

// awaitReady gives the stages a moment to report up: "serving" is printed
// once every component has started, and a stage reports up from its own
// goroutine, which a loaded machine may not have run yet. It does not fail:
// tests of a service that never gets ready go on after 10 s.
// awaitReady waits until /readyz answers 200 and the inputs every test
// may use at once (HTTP ingest and the single-frame intake) are up: /readyz
// is 200 ("degraded") while an input still starts.
func awaitReady(base string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return
		}
		var rd struct {
			Components []lifecycle.ComponentStatus `json:"components"`
		}
		err = json.NewDecoder(resp.Body).Decode(&rd)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err == nil && inputsUp(rd.Components, "http", "intake cuas.in.>") {
			return
		}
	}
}

// inputsUp reports whether each named component is up.
func inputsUp(cs []lifecycle.ComponentStatus, names ...string) bool {
	up := 0
	for _, c := range cs {
		for _, n := range names {
			if c.Name == n && c.State == lifecycle.Up {
				up++
			}
		}
	}
	return up == len(names)
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestServeEndToEnd(t *testing.T) {
	base, stop := startServe(t)
	defer stop()
	root := strings.TrimSuffix(base, "/api/cuas")

	if resp, body := get(t, base+"/readyz"); resp.StatusCode != 200 {
		t.Fatalf("readyz %d: %s", resp.StatusCode, body)
	}
	resp, body := get(t, base+"/v1/honest")
	var honest map[string]string
	if resp.StatusCode != 200 || json.Unmarshal(body, &honest) != nil || len(honest) != 7 || honest["doctrine"] != "v11" {
		t.Fatalf("honest %d: %s", resp.StatusCode, body)
	}
	for _, p := range []string{base + "/openapi.json", root + "/openapi.json"} {
		t.Run(p, func(t *testing.T) {
			resp, body := get(t, p)
			var doc struct {
				Paths map[string]any `json:"paths"`
			}
			if resp.StatusCode != 200 || json.Unmarshal(body, &doc) != nil || doc.Paths["/v1/counter-uas/evaluate"] == nil {
				t.Fatalf("%s: %d", p, resp.StatusCode)
			}
		})
	}
	if resp, _ := get(t, root+"/api/vessels/healthz"); resp.StatusCode != 200 {
		t.Errorf("alias healthz %d", resp.StatusCode)
	}
	if resp, _ := get(t, root+"/api/vessels/v1/cuas-redirect"); resp.StatusCode != 308 || resp.Header.Get("Location") != "/api/cuas/" {
		t.Errorf("redirect alias %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = get(t, root+"/metrics")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(body), "cuasd_build_info{") || !strings.Contains(string(body), "go_goroutines") ||
		!strings.Contains(string(body), "process_") {
		t.Errorf("metrics %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, body := get(t, base+"/v1/nope"); resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("404: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct {
		ct   string
		body string
		want int
	}{
		{"application/json", `{"hex": `, 400},
		{"application/json", `{"hexx": "8D"}`, 400},
		{"text/plain", `{"hex":"8D406B902015A678D4D220AA4BDA"}`, 415},
		{"application/json", `{"hex":"` + strings.Repeat("A", 2<<20) + `"}`, 413},
		{"application/json", `{"hex":"8D406B902015A678D4D220AA4BDB"}`, 422},
	} {
		t.Run(c.body, func(t *testing.T) {
			resp, err := http.Post(base+"/v1/ads-b/decode", c.ct, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s %.40q: %d %s, want %d problem+json", c.ct, c.body, resp.StatusCode, resp.Header.Get("Content-Type"), c.want)
			}
			var p map[string]any
			if json.Unmarshal(b, &p) != nil || p["detail"] == "" || p["status"] != float64(c.want) {
				t.Errorf("problem body %s", b)
			}
		})
	}
	req, _ := http.NewRequest("DELETE", base+"/v1/honest", nil)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 405 || r2.Header.Get("Allow") == "" {
		t.Errorf("405: %d Allow=%q", r2.StatusCode, r2.Header.Get("Allow"))
	}
}

func TestServeRestartKeepsData(t *testing.T) {
	// A second start on the same data dir must work (JetStream recovers).
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		_, stop := startServe(t, "--data-dir", dir)
		stop()
	}
}

func TestConfigPrecedence(t *testing.T) {
	f := t.TempDir() + "/c.yaml"
	if err := writeFile(f, "http-addr: 127.0.0.1:1111\nbase-path: /file\nlog-format: json\n"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CUAS_BASE_PATH": "/env", "CUAS_LOG_FORMAT": "text"}
	c, err := parseConfig([]string{"--config", f, "--log-format", "json"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:1111" || c.BasePath != "/env" || c.LogFormat != "json" {
		t.Errorf("precedence: %+v", c)
	}
	if _, err := parseConfig([]string{"--config", f}, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir() + "/bad.yaml"
	_ = writeFile(bad, "no-such-key: 1\n")
	if _, err := parseConfig([]string{"--config", bad}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("unknown config key accepted")
	}
	if _, err := parseConfig([]string{"--log-format", "xml"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("bad log format accepted")
	}
}

// TestConfigFileSeedsZones: geofences and the allow-list of the YAML
// configuration reach the replicated zone store and the API.
func TestConfigFileSeedsZones(t *testing.T) {
	f := t.TempDir() + "/cuasd.yaml"
	if err := writeFile(f, `
track-ttl: 30s
geofences:
  - id: stadium
    name: City Stadium
    class: stadium
    center: [51.556, -0.2796]
    radius_m: 800
    ceiling_m: 400
allowlist:
  uas_ids: ["1581F5FKD229400B"]
`); err != nil {
		t.Fatal(err)
	}
	base, stop := startServe(t, "--config", f)
	defer stop()
	resp, body := get(t, base+"/v1/geofences/stadium")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"City Stadium"`) || !strings.Contains(string(body), `"ceiling_m":400`) {
		t.Fatalf("geofence from config: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(t, base+"/v1/allowlist"); resp.StatusCode != 200 || !strings.Contains(string(body), "1581F5FKD229400B") {
		t.Fatalf("allow-list from config: %d %s", resp.StatusCode, body)
	}
	bad := t.TempDir() + "/bad.yaml"
	_ = writeFile(bad, "geofences:\n  - id: x\n    center: [95, 0]\n    radius_m: 10\n")
	if _, err := parseConfig([]string{"--config", bad}, func(string) string { return "" }, io.Discard); err == nil {
		t.Fatal("a geofence at latitude 95 was accepted")
	}
}

// TestMalformedAddressFailsAtStart (issue 32, item 4): a malformed
// --beast-connect address was retried for ever as if the receiver were
// down. Every HOST:PORT flag is now checked at start, and the error names
// the flag.
func TestMalformedAddressFailsAtStart(t *testing.T) {
	for _, tc := range []struct{ flag, addr, want string }{
		{"--beast-connect", "receiver", "want HOST:PORT"},
		{"--beast-connect", "receiver:30005x", "the port must be a number"},
		{"--avr-connect", ":30002", "a host to connect to is needed"},
		{"--sbs-connect", "dump1090:0", "1..65535"},
		{"--mavlink-tcp", "127.0.0.1", "want HOST:PORT"},
		{"--beast-out-connect", "agg:99999", "the port must be a number"},
		{"--beast-listen", "0.0.0.0", "want HOST:PORT"},
		{"--mavlink-udp", "127.0.0.1:port", "the port must be a number"},
	} {
		t.Run(tc.flag+" "+tc.addr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := run(ctx, []string{"serve", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--nats-listen", "off", tc.flag, tc.addr},
				func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), tc.flag+` "`+tc.addr+`"`) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: %v, want a start-up error naming the flag and %q", tc.flag, tc.addr, err, tc.want)
			}
		})
	}
}
