package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

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

// httpSecurity applies the least-privilege defaults of the HTTP API: open
// only on loopback unless --auth-tokens is configured. It returns the
// authenticator (nil: open) and the TLS configuration (nil: plain HTTP).
func httpSecurity(cfg config, log *slog.Logger) (*httpapi.Authenticator, *tls.Config, error) {
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
	return auth, tlsCfg, nil
}

// busOptions are the options of the bus: the embedded server's limits,
// listener, users and TLS, or the external NATS. A NATS listener that
// other hosts can reach needs --nats-users (or --insecure-open): without
// users, clients without credentials may publish raw frames and read
// events, which is acceptable on loopback only.
func busOptions(cfg config, log *slog.Logger) (bus.Options, error) {
	o := bus.Options{
		URL: cfg.NATSURL, DataDir: cfg.DataDir, Listen: cfg.NATSListen, MonitorAddr: cfg.NATSMonitor,
		MaxMemory: int64(cfg.JSMaxMemory), MaxStore: int64(cfg.JSMaxStore), ConnectName: "cuasd", Logger: log,
		SetupTimeout: time.Duration(cfg.JSStartWait),
	}
	if cfg.JSSync == "always" {
		o.SyncAlways = true
	} else {
		o.SyncInterval, _ = time.ParseDuration(cfg.JSSync) // validated by parseConfig
	}
	if cfg.NATSURL != "" {
		return o, nil
	}
	var err error
	if cfg.NATSUsers != "" {
		if o.Users, err = bus.LoadUsers(cfg.NATSUsers); err != nil {
			return o, fmt.Errorf("--nats-users: %w", err)
		}
	} else if bus.Listens(cfg.NATSListen) && !isLoopback(cfg.NATSListen) {
		if !cfg.InsecureOpen {
			return o, fmt.Errorf("refusing to open the NATS listener %s to the network without --nats-users "+
				"(sensor credentials limited to publishing cuas.raw.>), or pass --insecure-open", cfg.NATSListen)
		}
		log.Warn("INSECURE: the NATS listener accepts clients without credentials (--insecure-open)", "nats_listen", cfg.NATSListen)
	}
	if o.TLS, err = loadTLS(cfg.NATSTLSCert, cfg.NATSTLSKey, "--nats-tls-cert/--nats-tls-key"); err != nil {
		return o, err
	}
	if cfg.NATSMonitor != "" && !isLoopback(cfg.NATSMonitor) && !cfg.InsecureOpen {
		return o, fmt.Errorf("refusing to serve NATS monitoring on %s (it has no authentication): bind a loopback address "+
			"or pass --insecure-open", cfg.NATSMonitor)
	}
	return o, nil
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

// runToken implements `cuasd token new --name N --role R`: it prints a
// fresh token (shown once) and the line to add to the --auth-tokens file.
func runToken(args []string, stdout, stderr io.Writer) error {
	const usage = `Usage:
  cuasd token new --name NAME --role reader|sensor|operator|admin

Prints a fresh API bearer token (shown once) and the entry to add to the
--auth-tokens file of cuasd serve (only its SHA-256 is stored).`
	if len(args) > 0 && wantsHelp(args[:1]) {
		return printHelp(stdout, usage)
	}
	if len(args) == 0 || args[0] != "new" {
		fmt.Fprintln(stderr, usage)
		return errors.New("token: name a subcommand: new")
	}
	fs := newFlagSet("cuasd token new", usage, args[1:], stdout, stderr)
	name := fs.String("name", "", "token `NAME` (shown in logs and 403 answers; never the secret)")
	roleName := fs.String("role", "reader", "`ROLE`: reader, sensor, operator or admin")
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
