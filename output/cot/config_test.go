package cot

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"
)

func TestParseServer(t *testing.T) {
	for _, c := range []struct {
		in    string
		tls   bool
		addr  string
		proto int
	}{
		{"tcp://tak.example:8087", false, "tak.example:8087", ProtocolXML},
		{"ssl://10.0.0.5:8089", true, "10.0.0.5:8089", ProtocolXML},
		{"tls://[::1]:8089", true, "[::1]:8089", ProtocolXML},
		{"ssl://tak.example:8089?protocol=1", true, "tak.example:8089", ProtocolV1},
		{"tcp://tak.example:8087?protocol=0", false, "tak.example:8087", ProtocolXML},
	} {
		s, err := ParseServer(c.in)
		if err != nil || s.TLS != c.tls || s.Addr != c.addr || s.Protocol != c.proto {
			t.Errorf("ParseServer(%q) = %+v, %v", c.in, s, err)
		}
	}
	for _, bad := range []string{"", "tak.example:8089", "http://tak:8080", "ssl://tak", "ssl://tak:0", "ssl://tak:99999",
		"ssl://user:pw@tak:8089", "tcp://tak:8087/path", "ssl://tak:8089?protocol=2", "ssl://tak:8089?x=1", "ssl://:8089", "%zz"} {
		_, err := ParseServer(bad)
		var e *Error
		if !errors.As(err, &e) || e.Flag != "--tak-server" {
			t.Errorf("ParseServer(%q): %v, want an error naming --tak-server", bad, err)
		}
	}
}

func TestParseUDP(t *testing.T) {
	if a, err := ParseUDP("239.2.3.1:6969"); err != nil || !a.IP.IsMulticast() || a.Port != 6969 {
		t.Fatalf("ParseUDP: %v %v", a, err)
	}
	for _, bad := range []string{"239.2.3.1", "host:port", ":0", "1.2.3.4:70000"} {
		if _, err := ParseUDP(bad); err == nil || !strings.Contains(err.Error(), "--cot-udp") {
			t.Errorf("ParseUDP(%q): %v", bad, err)
		}
	}
}

// flagOf is the flag a configuration error names.
func flagOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Flag
	}
	return ""
}

func TestBadTLSFilesNameTheirFlag(t *testing.T) {
	p := newPKI(t)
	other := newPKI(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	_ = os.WriteFile(garbage, []byte("not a certificate"), 0o600)
	for _, c := range []struct {
		name  string
		files TLSFiles
		flag  string
		says  string
	}{
		{"missing certificate", TLSFiles{Cert: "/nonexistent/c.pem", Key: p.keyFile}, "--tak-cert", "no such file"},
		{"missing key", TLSFiles{Cert: p.certFile, Key: "/nonexistent/k.pem"}, "--tak-key", "no such file"},
		{"key of another certificate", TLSFiles{Cert: p.certFile, Key: other.keyFile}, "--tak-cert", "does not match"},
		{"certificate without key", TLSFiles{Cert: p.certFile}, "--tak-cert", "go together"},
		{"unreadable CA", TLSFiles{CA: "/nonexistent/ca.pem"}, "--tak-ca", "no such file"},
		{"CA without certificates", TLSFiles{CA: garbage}, "--tak-ca", "no PEM certificate"},
		{"both p12 and PEM", TLSFiles{P12: garbage, Cert: p.certFile, Key: p.keyFile}, "--tak-p12", "not both"},
		{"not a p12", TLSFiles{P12: garbage}, "--tak-p12", garbage},
	} {
		_, err := c.files.Config("tak.test")
		if flagOf(err) != c.flag || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want an error naming %s saying %q", c.name, err, c.flag, c.says)
		}
	}
}

// writeP12 writes the client credentials as a TAK Server admin hands
// them out: a PKCS#12 bundle with the CA chain.
func (p *pki) writeP12(t *testing.T, password string) string {
	t.Helper()
	b, err := pkcs12.Modern.Encode(p.clientKey, p.clientCert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.dir, "client.p12")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPKCS12ClientCertificate(t *testing.T) {
	p := newPKI(t)
	path := p.writeP12(t, "atakatak")
	_, err := TLSFiles{P12: path, P12Password: "wrong-secret", CA: p.caFile}.Config("127.0.0.1")
	if flagOf(err) != "--tak-p12" || !strings.Contains(err.Error(), "wrong password") || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("wrong password: %v (must name --tak-p12 and never echo the password)", err)
	}
	cfg, err := TLSFiles{P12: path, P12Password: "atakatak", CA: p.caFile}.Config("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	// The bundle's certificate authenticates to a server that requires one.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", p.serverConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := tlsAccept(ln)
	c, err := (&tls.Dialer{Config: cfg}).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	accepted(t, acc).Close()
}

func TestNewUDPRejectsBadOptions(t *testing.T) {
	if _, err := NewUDP("239.2.3.1:6969", UDPOptions{TTL: 300}, Options{}); flagOf(err) != "--cot-ttl" {
		t.Errorf("TTL 300: %v", err)
	}
	if _, err := NewUDP("239.2.3.1:6969", UDPOptions{Interface: "no-such-if0"}, Options{}); flagOf(err) != "--cot-interface" {
		t.Errorf("unknown interface: %v", err)
	}
}
