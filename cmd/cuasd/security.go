package main

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/httpapi"
)

// isLoopback reports whether a listen address only accepts local clients.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// security applies the least-privilege defaults: an open API only on
// loopback, sensor credentials on a NATS listener that others can reach.
// It returns the authenticator (nil: open) and the options for the bus.
func security(cfg config, bo *bus.Options, log *slog.Logger) (*httpapi.Authenticator, *tls.Config, error) {
	var auth *httpapi.Authenticator
	if cfg.AuthTokens != "" {
		a, err := httpapi.LoadTokens(cfg.AuthTokens)
		if err != nil {
			return nil, nil, fmt.Errorf("--auth-tokens: %w", err)
		}
		auth = a
	} else if !isLoopback(cfg.HTTPAddr) {
		if !cfg.InsecureOpen {
			return nil, nil, fmt.Errorf("refusing to serve an open API on %s: configure --auth-tokens (see `cuasd token new`), "+
				"bind a loopback address, or pass --insecure-open to override", cfg.HTTPAddr)
		}
		log.Warn("INSECURE: the API is open to every client that can reach it (--insecure-open)", "http_addr", cfg.HTTPAddr)
	} else {
		log.Warn("the API is open: no --auth-tokens configured (allowed because it listens on loopback only)", "http_addr", cfg.HTTPAddr)
	}

	tlsCfg, err := loadTLS(cfg.TLSCert, cfg.TLSKey, "--tls-cert/--tls-key")
	if err != nil {
		return nil, nil, err
	}

	listening := cfg.NATSURL == "" && bus.Listens(cfg.NATSListen)
	if !listening {
		return auth, tlsCfg, nil
	}
	var users []natsUser
	if cfg.NATSUsers != "" {
		if users, err = loadNATSUsers(cfg.NATSUsers); err != nil {
			return nil, nil, fmt.Errorf("--nats-users: %w", err)
		}
	} else if !isLoopback(cfg.NATSListen) {
		if !cfg.InsecureOpen {
			return nil, nil, fmt.Errorf("refusing to open the NATS listener %s to the network without --nats-users "+
				"(sensor credentials limited to publishing cuas.raw.>), or pass --insecure-open", cfg.NATSListen)
		}
		log.Warn("INSECURE: the NATS listener accepts any client (--insecure-open)", "nats_listen", cfg.NATSListen)
	}
	natsTLS, err := loadTLS(cfg.NATSTLSCert, cfg.NATSTLSKey, "--nats-tls-cert/--nats-tls-key")
	if err != nil {
		return nil, nil, err
	}
	if len(users) > 0 || natsTLS != nil {
		// cuasd's own in-process connection gets a user of its own with a
		// random password that exists only in this process's memory.
		var pw [24]byte
		_, _ = rand.Read(pw[:])
		internal := hex.EncodeToString(pw[:])
		prev := bo.Server
		bo.Server = func(o *server.Options) {
			if prev != nil {
				prev(o)
			}
			if len(users) > 0 {
				o.Users = append(o.Users, &server.User{Username: "cuasd-internal", Password: internal})
				for _, u := range users {
					o.Users = append(o.Users, &server.User{Username: u.User, Password: u.Password,
						Permissions: &server.Permissions{
							// Sensors publish raw frames and receive JetStream's
							// acknowledgements on their inboxes; nothing else.
							Publish:   &server.SubjectPermission{Allow: []string{bus.RawPrefix + ".>"}},
							Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
						}})
				}
			}
			if natsTLS != nil {
				o.TLSConfig, o.TLS = natsTLS, true
				o.AllowNonTLS = false
			}
		}
		if len(users) > 0 {
			bo.NATSOptions = append(bo.NATSOptions, nats.UserInfo("cuasd-internal", internal))
		}
		if natsTLS != nil {
			bo.NATSOptions = append(bo.NATSOptions, nats.Secure(pinnedTLS(natsTLS.Certificates[0].Certificate[0])))
		}
		log.Info("NATS sensor listener secured", "users", len(users), "tls", natsTLS != nil)
	}
	return auth, tlsCfg, nil
}

// natsUser is one sensor credential of the --nats-users file. Password
// may be a bcrypt hash ("$2a$..."), which nats-server checks as such.
type natsUser struct {
	User     string `yaml:"user"`
	Password string `yaml:"password"`
}

// loadTLS returns the server TLS configuration (TLS 1.2 or later) of a
// certificate and key pair, or nil when neither is given; flags names them
// in errors.
func loadTLS(certFile, keyFile, flags string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flags, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// pinnedTLS is the client TLS configuration of cuasd's in-process
// connection to its own embedded server when the listener requires TLS.
// The certificate was issued for the name sensors dial, perhaps by a
// private CA, so the chain and name are not what to check here: the
// connection accepts exactly the certificate cuasd loaded (leaf, DER).
func pinnedTLS(leaf []byte) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // replaced by the pin below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], leaf) {
				return errors.New("the embedded NATS server presented a certificate other than --nats-tls-cert")
			}
			return nil
		},
	}
}

var natsUserRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func loadNATSUsers(path string) ([]natsUser, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var us []natsUser
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&us); err != nil {
		return nil, err
	}
	if len(us) == 0 {
		return nil, errors.New("no users listed")
	}
	for i, u := range us {
		if !natsUserRE.MatchString(u.User) || u.User == "cuasd-internal" {
			return nil, fmt.Errorf("user %d: name must be 1-64 letters, digits, '.', '_' or '-' (and not cuasd-internal)", i)
		}
		if len(u.Password) < 12 {
			return nil, fmt.Errorf("user %q: password (or bcrypt hash) must have at least 12 characters", u.User)
		}
	}
	return us, nil
}

// runToken implements `cuasd token new --name N --role R`: it prints a
// fresh token (shown once) and the line to add to the --auth-tokens file.
func runToken(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "new" {
		return errors.New("token: usage: cuasd token new --name NAME --role reader|sensor|operator|admin")
	}
	fs := flag.NewFlagSet("cuasd token new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "token name (shown in logs and 403 answers; never the secret)")
	roleName := fs.String("role", "reader", "reader, sensor, operator or admin")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	role, err := httpapi.ParseRole(*roleName)
	if err != nil {
		return err
	}
	secret, e, err := httpapi.NewToken(*name, role)
	if err != nil {
		return err
	}
	if _, err := httpapi.NewAuthenticator([]httpapi.TokenEntry{e}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token: %s\n# add to the --auth-tokens file (the token itself is not stored):\n- name: %s\n  role: %s\n  sha256: %s\n",
		secret, e.Name, e.Role, e.SHA256)
	return nil
}
