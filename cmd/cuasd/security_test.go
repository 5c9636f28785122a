package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
)

func TestRefusesOpenNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--http-addr", "0.0.0.0:0", "--nats-listen", "off", "--data-dir", t.TempDir()},
		{"serve", "--http-addr", "127.0.0.1:0", "--nats-listen", "0.0.0.0:0", "--data-dir", t.TempDir()},
	} {
		err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "refusing") || !strings.Contains(err.Error(), "--insecure-open") {
			t.Errorf("%v: err %v", args, err)
		}
	}
}

func TestTokenNewAndAuth(t *testing.T) {
	secret, entry := newOperatorToken(t)
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, entry, 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServe(t, "--auth-tokens", file)
	defer stop()
	checkTokenGuards(t, base, secret)
}

// newOperatorToken runs 'cuasd token new' and returns the printed secret
// and the entry for a tokens file.
func newOperatorToken(t *testing.T) (secret string, entry []byte) {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "new", "--name", "ops", "--role", "operator"},
		func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(out.String(), "\n", 2)
	return strings.TrimPrefix(lines[0], "token: "), []byte(lines[1])
}

// checkTokenGuards checks that the API at base refuses a request without a
// token (401) and serves one with secret (200).
func checkTokenGuards(t *testing.T, base, secret string) {
	t.Helper()
	if resp, _ := get(t, base+"/v1/lambda"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/v1/lambda", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %d", resp.StatusCode)
	}
}

// TestNATSSensorCredentials: with --nats-users, a sensor may publish raw
// frames and nothing else, and an anonymous client is refused.
func TestNATSSensorCredentials(t *testing.T) {
	users := filepath.Join(t.TempDir(), "users.yaml")
	os.WriteFile(users, []byte("- user: rx1\n  password: correct-horse-battery\n"), 0o600)
	base, url, stop := startServeNATS(t, "--nats-users", users)
	defer stop()
	if _, err := nats.Connect(url, nats.Timeout(2*time.Second)); err == nil {
		t.Fatal("anonymous NATS connection accepted")
	}
	// A sensor reads its acknowledgements on its own inboxes (issue 32).
	nc, err := nats.Connect(url, nats.UserInfo("rx1", "correct-horse-battery"), nats.CustomInboxPrefix(bus.InboxPrefix("rx1")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	if _, err := js.Publish(ctx, "cuas.raw.adsb.rx1", frame); err != nil {
		t.Fatalf("sensor publish to cuas.raw: %v", err)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer pcancel()
	if _, err := js.Publish(pctx, "cuas.obs.adsb.406B90", []byte("forged")); err == nil {
		t.Fatal("a sensor could publish an observation")
	}
	waitTracks(t, base, "", func(ts []apiTrack) bool { return len(ts) == 1 && ts[0].ID == "adsb:406B90" })
}
