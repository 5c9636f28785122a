package cot

import (
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
	"path/filepath"
	"testing"
	"time"
)

// pki is a throw-away certificate authority with a server certificate
// (127.0.0.1 and tak.test) and a client certificate, as a TAK Server's
// makeCert.sh would issue, written to PEM files.
type pki struct {
	dir                       string
	ca                        *x509.Certificate
	caKey                     *ecdsa.PrivateKey
	serverCert                tls.Certificate
	clientCert                *x509.Certificate
	clientKey                 *ecdsa.PrivateKey
	caFile, certFile, keyFile string
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	p.caKey = newKey(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cuasd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	p.ca = p.sign(t, caTmpl, &p.caKey.PublicKey)
	srvKey := newKey(t)
	srv := p.sign(t, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "tak.test"},
		DNSNames: []string{"tak.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, &srvKey.PublicKey)
	p.serverCert = tls.Certificate{Certificate: [][]byte{srv.Raw}, PrivateKey: srvKey}
	p.clientKey = newKey(t)
	p.clientCert = p.sign(t, &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "cuasd-client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, &p.clientKey.PublicKey)
	p.caFile = p.writePEM(t, "ca.pem", "CERTIFICATE", p.ca.Raw)
	p.certFile = p.writePEM(t, "client.pem", "CERTIFICATE", p.clientCert.Raw)
	der, err := x509.MarshalPKCS8PrivateKey(p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	p.keyFile = p.writePEM(t, "client.key", "PRIVATE KEY", der)
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *pki) sign(t testing.TB, tmpl *x509.Certificate, pub any) *x509.Certificate {
	t.Helper()
	parent := p.ca
	if parent == nil {
		parent = tmpl // self-signed CA
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (p *pki) writePEM(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverConfig is a TAK Server's TLS listener: it requires a client
// certificate signed by the CA.
func (p *pki) serverConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

func (p *pki) clientFiles() TLSFiles {
	return TLSFiles{Cert: p.certFile, Key: p.keyFile, CA: p.caFile}
}
