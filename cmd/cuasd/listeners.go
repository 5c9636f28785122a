package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/mavudp"
	"github.com/cuasd/cuasd/ingest/sensors/jsonudp"
	"github.com/cuasd/cuasd/sim"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
)

// bindListeners binds every socket the configuration asks for, before
// anything is created in the data directory: the HTTP listener and the
// input sources that listen. The embedded NATS listener, which nats-server
// binds itself, is checked to be free. An address in use fails the start
// at once, naming the address and the flag that sets it.
func (s *service) bindListeners(context.Context) error {
	var err error
	if s.auth, s.httpTLS, err = httpSecurity(s.cfg, s.log); err != nil {
		return err
	}
	if s.busOpts, err = busOptions(s.cfg, s.log); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return listenError("--http-addr", s.cfg.HTTPAddr, err)
	}
	// A cap on connections, like every other listener's: a thousand idle
	// or slow clients wait in the accept queue instead of each holding a
	// goroutine and buffers (the timeouts in startHTTP close them).
	s.httpLn = netutil.LimitListener(ln, s.cfg.HTTPMaxConns)
	if s.cfg.NATSURL == "" && bus.Listens(s.cfg.NATSListen) {
		if err := probeFree("--nats-listen", s.cfg.NATSListen); err != nil {
			return err
		}
	}
	if s.cfg.NATSMonitor != "" {
		if err := probeFree("--nats-monitor", s.cfg.NATSMonitor); err != nil {
			return err
		}
	}
	if err := probeReadsbListeners(s.cfg); err != nil { // issue 21: the outputs bind when they start
		return err
	}
	s.sources, err = inputSources(s.cfg, s)
	return err
}

// closeListeners releases whatever bindListeners bound and nobody ran
// (after a failed start; a running source or server closes its own).
func (s *service) closeListeners(context.Context) error {
	if s.httpLn != nil {
		s.httpLn.Close()
	}
	for _, src := range s.sources {
		if c, ok := src.(interface{ Close() error }); ok {
			c.Close()
		}
	}
	return nil
}

// inputSources builds the input sources of the configuration; the ones
// that listen are bound now.
func inputSources(cfg config, s *service) ([]ingest.Source, error) {
	var out []ingest.Source
	fail := func(err error) ([]ingest.Source, error) {
		for _, src := range out {
			if c, ok := src.(interface{ Close() error }); ok {
				c.Close()
			}
		}
		return nil, err
	}
	out, err := modeSSources(cfg, s)
	if err != nil {
		return fail(err)
	}
	if cfg.AVRConnect != "" {
		out = append(out, ingest.ConnectModeS(cfg.AVRConnect, ingest.AVR, s.log))
	}
	if cfg.SBSConnect != "" { // issue 21
		out = append(out, ingest.ConnectModeS(cfg.SBSConnect, ingest.SBS, s.log))
	}
	if cfg.MAVLinkUDP != "" {
		u, err := mavudp.ListenUDP(mavudp.UDPConfig{Addr: cfg.MAVLinkUDP, PerPeerSensor: true, Log: s.log})
		if err != nil {
			return fail(listenError("--mavlink-udp", cfg.MAVLinkUDP, err))
		}
		out = append(out, u)
	}
	if cfg.MAVLinkTCP != "" {
		t, err := mavudp.NewTCP(mavudp.TCPConfig{Addr: cfg.MAVLinkTCP, Log: s.log})
		if err != nil {
			return fail(fmt.Errorf("--mavlink-tcp: %w", err))
		}
		out = append(out, t)
	}
	if cfg.Demo {
		out = append(out, &ingest.Simulator{Config: sim.DefaultDemo(), Sensor: "demo"})
	}
	sens, err := sensorSources(cfg, s)
	if err != nil {
		return fail(err)
	}
	return append(out, sens...), nil
}

// modeSSources builds the Beast and AVR listeners (bound now) and the
// Beast client; a receiver address may name its clock (?clock=gps), and
// name and place its receiver (?sensor=&lat=&lon=&alt=, issue 31).
func modeSSources(cfg config, s *service) ([]ingest.Source, error) {
	var out []ingest.Source
	for _, r := range cfg.receiverFlags() {
		if r.spec == "" {
			continue
		}
		spec, name, _, err := r.parse(r.spec)
		if err != nil {
			return out, fmt.Errorf("%s: %w", r.flag, err)
		}
		addr, clock, err := ingest.SplitClock(spec)
		if err != nil {
			return out, fmt.Errorf("%s: %w", r.flag, err)
		}
		if !r.listen {
			c := ingest.ConnectModeS(addr, r.format, s.log)
			c.Clock = clock
			if name != "" {
				c.Sensor = name
			}
			out = append(out, c)
			continue
		}
		src, err := ingest.ListenModeS(addr, r.format, s.log)
		if err != nil {
			return out, listenError(r.flag, addr, err)
		}
		src.Clock, src.Fixed = clock, name
		out = append(out, src)
	}
	return out, nil
}

// listenError explains a failed bind: which flag, which address, and what
// to do when it is in use.
func listenError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s %s: the address is already in use (another cuasd, or another program, listens there); "+
			"stop it or choose another address with %s", flag, addr, flag)
	}
	return fmt.Errorf("%s %s: %w", flag, addr, err)
}

// probeFree checks that a TCP address can be bound, and releases it.
func probeFree(flag, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return listenError(flag, addr, err)
	}
	return ln.Close()
}

// listenAddr is the "name=address" line `cuasd serve` prints for a
// listening source (tests and scripts read the bound port from it).
func listenAddr(src ingest.Source) string {
	switch l := src.(type) {
	case *ingest.ModeSListener:
		return string(l.Format) + "=" + l.Addr().String()
	case *mavudp.UDP:
		return "mavlink-udp=" + l.Addr().String()
	case *jsonudp.Listener:
		return "json-udp=" + l.Addr().String()
	}
	return ""
}

// declareCounters creates every frame counter cuasd serve can increment
// (the HTTP adapters for every protocol, and each counted source) at 0, so
// that /metrics shows them before any traffic (issue 24).
func declareCounters(pub *ingest.Publisher, sources []ingest.Source) {
	for _, a := range []string{"http", "http-decode"} {
		pub.Declare(ingest.Counters{Adapter: a, Protocols: ingest.Protocols})
	}
	for _, src := range sources {
		if c, ok := src.(ingest.Counted); ok {
			pub.Declare(c.Counters())
		}
	}
}

// registerKernelDrops exports, for each source reading a UDP socket, the
// datagrams the kernel dropped for it (issue 32): a burst beyond the
// socket's receive buffer is lost before cuasd reads it, and only the
// kernel counts it.
func registerKernelDrops(reg prometheus.Registerer, sources []ingest.Source) {
	for _, src := range sources {
		kd, ok := src.(ingest.KernelDropper)
		if !ok {
			continue
		}
		_ = reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "cuasd_udp_kernel_drops_total",
			Help:        "Datagrams the kernel dropped for a UDP input's full receive buffer (/proc/net/udp drops), by source.",
			ConstLabels: prometheus.Labels{"source": src.Name()},
		}, func() float64 {
			d, _ := kd.KernelDrops()
			return float64(d)
		}))
	}
}
