package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files
// and returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "cuasd test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS: with --tls-cert/--tls-key the API is served over HTTPS
// only (TLS 1.2 or later), and the printed URL says so.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	base, stop := startServe(t, "--tls-cert", certFile, "--tls-key", keyFile)
	defer stop()
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("printed URL %q is not https", base)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("HTTPS /healthz: status %d, TLS %+v", resp.StatusCode, resp.TLS)
	}
	old := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}}}
	if resp, err := old.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a TLS 1.1 client was served")
	}
	plain := strings.Replace(base, "https://", "http://", 1)
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(plain + "/healthz"); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP was served with 200")
		}
	}
}

// TestNATSListenerTLS: with --nats-tls-cert/--nats-tls-key the embedded
// NATS listener requires TLS; a client trusting the certificate publishes a
// frame that becomes a track, and a plain client is refused.
func TestNATSListenerTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	base, url, stop := startServeNATS(t, "--nats-tls-cert", certFile, "--nats-tls-key", keyFile)
	defer stop()
	if nc, err := nats.Connect(url, nats.Timeout(2*time.Second)); err == nil {
		nc.Close()
		t.Fatal("a plain NATS connection was accepted")
	}
	nc, err := nats.Connect(url, nats.Secure(&tls.Config{RootCAs: pool}), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("TLS NATS connection: %v", err)
	}
	defer nc.Close()
	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := nc.RequestWithContext(ctx, "cuas.raw.adsb.rx1", frame); err != nil {
		t.Fatalf("publish over TLS: %v", err)
	}
	waitTracks(t, base, "", func(ts []apiTrack) bool { return len(ts) == 1 && ts[0].ID == "adsb:406B90" })
}

// TestServeTLSBadFiles: unreadable certificate files stop serve at start
// with an error naming the flags.
func TestServeTLSBadFiles(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, flags := range [][]string{{"--tls-cert", missing, "--tls-key", missing}, {"--nats-listen", "127.0.0.1:0", "--nats-tls-cert", missing, "--nats-tls-key", missing}} {
		args := append([]string{"serve", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--nats-listen", "off", "--log-level", "error"}, flags...)
		err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
		want := flags[len(flags)-4] + "/" + flags[len(flags)-2]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("serve %v: %v, want an error naming %s", flags, err, want)
		}
	}
}
