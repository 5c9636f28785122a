package mqtt

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/cuasd/cuasd/internal/mosquittotest"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
)

// writeCerts writes a CA and a server certificate for 127.0.0.1 signed by
// it (PEM) into dir.
func writeCerts(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{ca, "CERTIFICATE", caDER}, {cert, "CERTIFICATE", srvDER}, {key, "EC PRIVATE KEY", keyDER}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// startMosquittoTLS runs mosquitto with a TLS listener that requires a
// user name and password (user "cuasd", password "pw-for-tests").
func startMosquittoTLS(t *testing.T) (addr, ca string) {
	t.Helper()
	mosquittotest.Require(t)
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		t.Skip("mosquitto_passwd not installed")
	}
	dir := t.TempDir()
	ca, cert, key := writeCerts(t, dir)
	pw := filepath.Join(dir, "passwd")
	if out, err := exec.Command(passwd, "-b", "-c", pw, "cuasd", "pw-for-tests").CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_passwd: %v %s", err, out)
	}
	return mosquittotest.Start(t, "cafile "+ca+"\ncertfile "+cert+"\nkeyfile "+key+"\nallow_anonymous false\npassword_file "+pw+"\n"), ca
}

func TestMosquittoTLSWithCredentials(t *testing.T) {
	addr, ca := startMosquittoTLS(t)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	_ = os.WriteFile(good, []byte("cuasd\npw-for-tests\n"), 0o600)
	_ = os.WriteFile(bad, []byte("cuasd\nwrong\n"), 0o600)
	ns := natstest.Start(t)

	// Wrong password: the output says why it is not up, without the password.
	rep := &lastErr{}
	o, err := New(Config{URL: "mqtts://" + addr, CAFile: ca, CredentialsFile: bad, Node: "tls"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = o.Run(ctx, output.Conn(ns.Conn), rep); close(done) }()
	for deadline := time.Now().Add(20 * time.Second); rep.get() == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a refused login was never reported")
		}
	}
	cancel()
	<-done
	t.Logf("refused login reported as: %v", rep.get())
	if e := rep.get(); strings.Contains(e.Error(), "wrong") || rep.wasUp() {
		t.Errorf("reported %v (up %v)", e, rep.wasUp())
	}

	// Right password over TLS verified with --mqtt-ca: online.
	sub := subscribeTLS(t, addr, ca)
	o, err = New(Config{URL: "mqtts://" + addr, CAFile: ca, CredentialsFile: good, Node: "tls"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = o.Run(ctx, output.Conn(ns.Conn), nopReporter{}) }()
	sub.wait(t, "cuas/status", is("online"))
	sub.wait(t, "homeassistant/sensor/tls/active_threats/config", func(string) bool { return true })
}

func subscribeTLS(t *testing.T, addr, ca string) *subscriber {
	t.Helper()
	pem, _ := os.ReadFile(ca)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	s := &subscriber{note: make(chan struct{}, 1)}
	c := paho.NewClient(paho.NewClientOptions().AddBroker("mqtts://" + addr).SetClientID("tls-watcher").
		SetUsername("cuasd").SetPassword("pw-for-tests").SetTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscriber connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	if tok := c.Subscribe("#", 1, s.record); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return s
}

// lastErr records the last Retrying error and whether Up was reported.
type lastErr struct {
	mu  sync.Mutex
	err error
	up  bool
}

func (r *lastErr) Up() { r.mu.Lock(); r.up = true; r.mu.Unlock() }
func (r *lastErr) Retrying(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}
func (r *lastErr) get() error  { r.mu.Lock(); defer r.mu.Unlock(); return r.err }
func (r *lastErr) wasUp() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.up }
