package cot

import (
	"bufio"
	"crypto/x509"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTAKServerOpenSSL streams to `openssl s_server` requiring a client
// certificate: an independent TLS implementation verifies cuasd's client
// certificate and prints the stream it received.
func TestTAKServerOpenSSL(t *testing.T) {
	bin, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl is required under CI=true")
		}
		t.Skip("openssl not installed")
	}
	p := newPKI(t)
	der, err := x509.MarshalPKCS8PrivateKey(p.serverCert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	srvCert := p.writePEM(t, "server.pem", "CERTIFICATE", p.serverCert.Certificate[0])
	srvKey := p.writePEM(t, "server.key", "PRIVATE KEY", der)
	port := freeTCPPort(t)
	cmd := exec.Command(bin, "s_server", "-accept", "127.0.0.1:"+port, "-cert", srvCert, "-key", srvKey,
		"-CAfile", p.caFile, "-Verify", "1", "-verify_return_error", "-naccept", "1", "-quiet")
	// s_server closes the connection when its stdin ends: keep it open.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	s, err := NewServer("ssl://127.0.0.1:"+port, p.clientFiles(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The sink dials (with back-off) until s_server listens.
	nc, _ := runSink(t, s)
	publishTrack(t, nc, droneAlert())
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		r := bufio.NewReader(out)
		for strings.Count(b.String(), "</event>") < 2 {
			chunk, err := r.ReadString('>')
			b.WriteString(chunk)
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, `uid="cuasd.site1.rid-1581F5BKD223Q00A0123"`) || !strings.Contains(s, `uid="cuasd.site1.rid-1581F5BKD223Q00A0123.operator"`) {
			t.Fatalf("openssl s_server received:\n%s\nstderr: %s", s, stderr.String())
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a timing assertion
		t.Fatalf("openssl s_server received nothing; sink %+v", s.Sinks()[0])
	}
}

func freeTCPPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
