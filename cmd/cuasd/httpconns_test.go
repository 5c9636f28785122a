package main

import (
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// The HTTP listener is capped like every other listener (issue 23, "a
// thousand idle connections: bounded by a per-listener limit"): with
// --http-max-conns 2 and two silent connections open, a third client is not
// served; when one of them goes, it is.
func TestHTTPConnectionsAreCapped(t *testing.T) {
	base, stop := startServe(t, "--http-max-conns", "2")
	defer stop()
	http.DefaultClient.CloseIdleConnections() // the start-up probe's keep-alive connection
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get(base + "/v1/honest"); err == nil {
		resp.Body.Close()
		t.Fatalf("a third connection was served (%s) while two held the cap", resp.Status)
	}
	idle[0].Close()
	client.Timeout = 10 * time.Second
	resp, err := client.Get(base + "/v1/honest")
	if err != nil {
		t.Fatalf("not served after a connection closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %s", resp.Status)
	}
}
