package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/internal/secretfile"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/cot"
)

// stringList is a repeatable flag ("--cot-udp a --cot-udp b", or
// "a,b" in one value or CUAS_COT_UDP) and a YAML list or scalar. Values
// from the environment or flags replace the file's list and add to each
// other.
type stringList struct {
	vals     []string
	fromFile bool
}

func (l *stringList) String() string { return strings.Join(l.vals, ",") }
func (l *stringList) Set(s string) error {
	if l.fromFile {
		l.vals, l.fromFile = nil, false
	}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			l.vals = append(l.vals, v)
		}
	}
	return nil
}
func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	var vals []string
	if n.Kind == yaml.ScalarNode {
		vals = []string{n.Value}
	} else if err := n.Decode(&vals); err != nil {
		return err
	}
	l.vals, l.fromFile = vals, true
	return nil
}

// tlsFiles are the TAK client credentials, with the PKCS#12 password read.
func (c *CoTFlags) tlsFiles() (cot.TLSFiles, error) {
	f := cot.TLSFiles{Cert: c.TAKCert, Key: c.TAKKey, CA: c.TAKCA, P12: c.TAKP12, P12Password: c.TAKP12Password}
	if c.TAKP12PasswordFile != "" {
		b, err := secretfile.Read(c.TAKP12PasswordFile, secretfile.MaxKey)
		if err != nil {
			return f, fmt.Errorf("--tak-p12-password-file: %w", err)
		}
		f.P12Password = strings.TrimRight(string(b), "\r\n")
	}
	return f, nil
}

// cotSinks builds every configured sink: the files are loaded and the
// addresses checked now, so a bad value stops the start naming its flag.
func (c *CoTFlags) cotSinks(o cot.Options) ([]*cot.Sink, error) {
	var sinks []*cot.Sink
	var errs []error
	for _, a := range c.CoTUDP.vals {
		s, err := cot.NewUDP(a, cot.UDPOptions{TTL: c.CoTTTL, Interface: c.CoTInterface}, o)
		errs = append(errs, err)
		if err == nil {
			sinks = append(sinks, s)
		}
	}
	if len(c.TAKServer.vals) > 0 {
		files, err := c.tlsFiles()
		if err != nil {
			return nil, errors.Join(append(errs, err)...)
		}
		for _, u := range c.TAKServer.vals {
			s, err := cot.NewServer(u, files, o)
			errs = append(errs, err)
			if err == nil {
				sinks = append(sinks, s)
			}
		}
	}
	return sinks, errors.Join(errs...)
}

// cotValidate checks the CoT configuration at start (and discards what it
// built; the service builds its sinks with its metrics).
func (c *CoTFlags) cotValidate() error {
	if c.CoTTTL < 1 || c.CoTTTL > 255 {
		return fmt.Errorf("--cot-ttl must be 1-255, got %d", c.CoTTTL)
	}
	if (c.TAKCert != "" || c.TAKKey != "" || c.TAKCA != "" || c.TAKP12 != "") && len(c.TAKServer.vals) == 0 {
		return errors.New("--tak-cert, --tak-key, --tak-ca and --tak-p12 need a --tak-server ssl://HOST:PORT")
	}
	_, err := c.cotSinks(cot.Options{})
	return err
}

// cotOutputs are the service's CoT sinks, built once.
type cotOutputs struct {
	once  sync.Once
	sinks []*cot.Sink
}

// cotSinks returns the CoT sinks as outputs (outputList's one line).
func (s *service) cotSinks() []output.Output {
	s.cot.once.Do(func() {
		sinks, err := s.cfg.cotSinks(cot.Options{Queue: s.cfg.CoTQueue, Metrics: cot.NewMetrics(s.reg), Log: s.log,
			RotaryByReference: cot.RotaryAirframes(s.drones)})
		if err != nil { // validated at start; only a file changed since could fail
			s.log.Error("CoT outputs", "err", err)
		}
		s.cot.sinks = sinks
	})
	out := make([]output.Output, len(s.cot.sinks))
	for i, k := range s.cot.sinks {
		out[i] = k
	}
	return out
}

// outputStatus is GET /v1/outputs: every sink of every output that
// describes itself.
func (s *service) outputStatus() []output.SinkStatus {
	var st []output.SinkStatus
	for _, o := range s.cotSinks() {
		if d, ok := o.(output.Describer); ok {
			st = append(st, d.Sinks()...)
		}
	}
	return st
}
