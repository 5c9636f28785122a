package cot

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"

	"software.sslmate.com/src/go-pkcs12"
)

// Error is the error type of package cot: a bad configuration names the
// flag it came from; a sink failure names the sink.
type Error struct {
	// Flag is the flag at fault ("--tak-cert"), or the sink's name.
	Flag string
	Err  error
}

func (e *Error) Error() string { return "cot: " + e.Flag + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func flagErr(flag string, format string, a ...any) error {
	return &Error{Flag: flag, Err: fmt.Errorf(format, a...)}
}

// Server is a parsed --tak-server value.
type Server struct {
	// TLS is true for ssl:// (TAK Server's port 8089), false for tcp://
	// (8087).
	TLS bool
	// Addr is host:port.
	Addr string
	// Host is the name the server's certificate must carry.
	Host string
	// Protocol is ProtocolXML, or ProtocolV1 (?protocol=1): ask the server
	// for TAK Protocol version 1, keeping XML if it does not agree.
	Protocol int
}

// ParseServer parses "tcp://HOST:PORT" or "ssl://HOST:PORT" ("tls://" is
// accepted for ssl://), optionally with "?protocol=1" (TAK Protocol
// version 1, negotiated) or "?protocol=0" (XML, the default). The port is
// required: TAK Servers listen on several, and guessing one sends data
// where the operator did not say.
func ParseServer(s string) (Server, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Server{}, flagErr("--tak-server", "%q is not a URL (want tcp://HOST:PORT or ssl://HOST:PORT)", s)
	}
	var srv Server
	switch u.Scheme {
	case "tcp":
	case "ssl", "tls":
		srv.TLS = true
	default:
		return Server{}, flagErr("--tak-server", "%q: scheme must be tcp or ssl, got %q", s, u.Scheme)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return Server{}, flagErr("--tak-server", "%q: only scheme://HOST:PORT[?protocol=1] is allowed (no user or path)", s)
	}
	switch u.RawQuery {
	case "", "protocol=0":
	case "protocol=1":
		srv.Protocol = ProtocolV1
	default:
		return Server{}, flagErr("--tak-server", "%q: the only option is ?protocol=0 (XML, the default) or ?protocol=1 (TAK Protocol version 1)", s)
	}
	host, port := u.Hostname(), u.Port()
	if p, err := strconv.Atoi(port); host == "" || err != nil || p < 1 || p > 65535 {
		return Server{}, flagErr("--tak-server", "%q: want HOST:PORT with a port 1-65535 (TAK Server: 8087 tcp, 8089 ssl)", s)
	}
	srv.Addr, srv.Host = net.JoinHostPort(host, port), host
	return srv, nil
}

// ParseUDP checks a --cot-udp HOST:PORT (unicast or multicast).
func ParseUDP(s string) (*net.UDPAddr, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return nil, flagErr("--cot-udp", "%q: want HOST:PORT, e.g. 239.2.3.1:6969: %v", s, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, flagErr("--cot-udp", "%q: port must be 1-65535", s)
	}
	a, err := net.ResolveUDPAddr("udp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, flagErr("--cot-udp", "%q: %v", s, err)
	}
	return a, nil
}

// TLSFiles are the client credentials for ssl:// TAK Servers: a PEM
// certificate and key, or the PKCS#12 bundle a TAK Server admin hands out,
// and the CA that signed the server's certificate.
type TLSFiles struct {
	Cert, Key, CA string
	P12           string
	// P12Password is the bundle's password (a secret: never logged).
	P12Password string
}

// Config loads the files and returns a client TLS configuration that
// verifies the server's certificate and name (host) against CA, or the
// system roots without one. Every failure names the flag at fault.
func (f TLSFiles) Config(host string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	cert, err := f.clientCert()
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, flagErr("--tak-ca", "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, flagErr("--tak-ca", "%s holds no PEM certificate", f.CA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// clientCert loads the client certificate, nil when none is configured.
func (f TLSFiles) clientCert() (*tls.Certificate, error) {
	switch {
	case f.P12 != "" && (f.Cert != "" || f.Key != ""):
		return nil, flagErr("--tak-p12", "give either --tak-p12 or --tak-cert/--tak-key, not both")
	case f.P12 != "":
		return loadP12(f.P12, f.P12Password)
	case f.Cert == "" && f.Key == "":
		return nil, nil
	case f.Cert == "" || f.Key == "":
		return nil, flagErr("--tak-cert", "--tak-cert and --tak-key go together")
	}
	if _, err := os.Stat(f.Cert); err != nil {
		return nil, flagErr("--tak-cert", "%v", err)
	}
	if _, err := os.Stat(f.Key); err != nil {
		return nil, flagErr("--tak-key", "%v", err)
	}
	c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		// LoadX509KeyPair says whether the key does not match the
		// certificate or a file holds no PEM block of the right kind.
		return nil, flagErr("--tak-cert", "%s with --tak-key %s: %v", f.Cert, f.Key, err)
	}
	return &c, nil
}

// loadP12 decodes a PKCS#12 bundle (the key, its certificate and the CA
// chain a TAK Server's makeCert.sh writes).
func loadP12(path, password string) (*tls.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, flagErr("--tak-p12", "%v", err)
	}
	key, leaf, chain, err := pkcs12.DecodeChain(b, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		// The password itself is never echoed.
		return nil, flagErr("--tak-p12", "%s: wrong password (set CUAS_TAK_P12_PASSWORD or --tak-p12-password-file)", path)
	}
	if err != nil {
		return nil, flagErr("--tak-p12", "%s: %v", path, err)
	}
	c := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	return &c, nil
}
