package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/output/cot"
	"github.com/cuasd/cuasd/web"
)

// duration is a time.Duration that reads "60s" from flags, environment
// variables and YAML alike.
type duration time.Duration

func (d *duration) String() string { return time.Duration(*d).String() }
func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}
func (d *duration) UnmarshalYAML(n *yaml.Node) error { return d.Set(n.Value) }

// byteSize is a size in bytes that reads "512MiB", "4GiB" or a plain number.
type byteSize int64

// String prints the size in the largest binary unit that divides it
// ("256MiB"), as --help shows defaults and as Set reads them back.
func (b *byteSize) String() string {
	v := int64(*b)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v != 0 && v%u.m == 0 {
			return fmt.Sprintf("%d%s", v/u.m, u.suffix)
		}
	}
	return fmt.Sprint(v)
}
func (b *byteSize) Set(s string) error {
	mult := int64(1)
	t := strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			mult, t = u.m, strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	var n int64
	if _, err := fmt.Sscan(t, &n); err != nil || n < 0 {
		return fmt.Errorf("invalid size %q (use e.g. 512MiB)", s)
	}
	*b = byteSize(n * mult)
	return nil
}
func (b *byteSize) UnmarshalYAML(n *yaml.Node) error { return b.Set(n.Value) }

// config is everything `cuasd serve` can be told. Each field is a flag, a
// CUAS_* environment variable (the flag name upper-cased, '-' → '_') and a
// key of the YAML file given with --config. Precedence: flag, then
// environment, then file, then default.
type config struct {
	ConfigFile string `yaml:"-"`

	HTTPAddr  string `yaml:"http-addr"`
	BasePath  string `yaml:"base-path"`
	DataDir   string `yaml:"data-dir"`
	LogFormat string `yaml:"log-format"`
	LogLevel  string `yaml:"log-level"`

	NATSURL     string   `yaml:"nats-url"`
	NATSListen  string   `yaml:"nats-listen"`
	NATSMonitor string   `yaml:"nats-monitor"`
	JSMaxMemory byteSize `yaml:"js-max-memory"`
	JSMaxStore  byteSize `yaml:"js-max-store"`
	JSSync      string   `yaml:"js-sync"`
	JSStartWait duration `yaml:"js-start-timeout"` // bus.Setup: waits for a forming cluster
	DiskLowMark byteSize `yaml:"disk-low-mark"`    // issue 32
	RawMaxAge   duration `yaml:"raw-max-age"`
	RawMaxBytes byteSize `yaml:"raw-max-bytes"`
	ObsMaxAge   duration `yaml:"obs-max-age"`
	ObsMaxBytes byteSize `yaml:"obs-max-bytes"`
	Replicas    int      `yaml:"replicas"`
	TrackTTL    duration `yaml:"track-ttl"`
	ADSBFix     bool     `yaml:"adsb-fix"`
	PublishObs  bool     `yaml:"publish-observations"` // CUAS_OBS for outside consumers; fusion never needs it
	// The receiver flags are repeatable: one listener per port (a port
	// may be one receiver's, ?sensor=NAME), one client per receiver.
	BeastListen  stringList `yaml:"beast-listen"`
	AVRListen    stringList `yaml:"avr-listen"`
	BeastConnect stringList `yaml:"beast-connect"`
	// Sensors are the Mode S receivers taking part in multilateration
	// (issue 31; config file only).
	Sensors    []MLATSensor `yaml:"sensors"`
	AVRConnect string       `yaml:"avr-connect"`
	// MAVLinkKey is a secret: it is never logged or echoed.
	MAVLinkKey      string   `yaml:"mavlink-key"`
	Demo            bool     `yaml:"demo"`
	MAVLinkUDP      string   `yaml:"mavlink-udp"`
	MAVLinkTCP      string   `yaml:"mavlink-tcp"`
	SigningKey      string   `yaml:"signing-key"`
	Unsigned        bool     `yaml:"unsigned"`
	Instance        string   `yaml:"instance"`
	TileURL         string   `yaml:"tile-url"`
	TileAttribution string   `yaml:"tile-attribution"`
	EvalInterval    duration `yaml:"eval-interval"`
	// GatePolicy is the gate's policy file (issue 33); policy is what it
	// holds, read by validate.
	GatePolicy   string      `yaml:"gate-policy"`
	policy       gate.Policy `yaml:"-"`
	AuthTokens   string      `yaml:"auth-tokens"`
	RateLimit    float64     `yaml:"rate-limit"`
	HTTPMaxConns int         `yaml:"http-max-conns"`
	// IntakeSensorRate and IntakeSensorBytes are the single-frame intake's
	// per-sensor limits (issue 32; ingest.SensorLimits).
	IntakeSensorRate  float64  `yaml:"intake-sensor-rate"`
	IntakeSensorBytes byteSize `yaml:"intake-sensor-bytes"`
	// RawSensorRate and RawSensorBytes are the decoders' per-sensor limits
	// on cuas.raw, spent in the storage time (worker.Worker.WithLimits);
	// off by default, because a fast replay is a burst in the storage time.
	RawSensorRate  float64  `yaml:"raw-sensor-rate"`
	RawSensorBytes byteSize `yaml:"raw-sensor-bytes"`
	InsecureOpen   bool     `yaml:"insecure-open"`
	MetricsToken   string   `yaml:"metrics-token"`
	TLSCert        string   `yaml:"tls-cert"`
	TLSKey         string   `yaml:"tls-key"`
	NATSUsers      string   `yaml:"nats-users"`
	NATSTLSCert    string   `yaml:"nats-tls-cert"`
	NATSTLSKey     string   `yaml:"nats-tls-key"`

	// Track history (issue 20, package output/history).
	History         bool     `yaml:"history"`
	HistoryMaxAge   duration `yaml:"history-max-age"`
	HistoryMaxBytes byteSize `yaml:"history-max-bytes"`
	// Issue 18: Cursor-on-Target / TAK outputs (cmd/cuasd/cot.go).
	CoTFlags `yaml:",inline"`
	// readsb-compatible outputs and the SBS input (issue 21).
	JSONDir          string `yaml:"json-dir"`
	ReadsbJSON       bool   `yaml:"readsb-json"`
	ReadsbDrones     bool   `yaml:"readsb-drones"`
	ReadsbFrames     bool   `yaml:"readsb-frames"`
	ReceiverLocation string `yaml:"receiver-location"`
	SBSListen        string `yaml:"sbs-listen"`
	SBSReduce        bool   `yaml:"sbs-reduce"`
	SBSConnect       string `yaml:"sbs-connect"`
	BeastOutListen   string `yaml:"beast-out-listen"`
	BeastOutConnect  string `yaml:"beast-out-connect"`
	BeastOutAll      bool   `yaml:"beast-out-all"`
	// DemoOutputs lets simulated traffic out through Beast out, SBS and
	// aircraft.json (issue 34; marked "simulated" in aircraft.json).
	DemoOutputs bool `yaml:"demo-outputs"`
	// Field sensor inputs (issue 25): repeatable, see docs/SENSORS.md.
	ZMQConnect   stringList `yaml:"zmq-connect"`
	JSONUDP      stringList `yaml:"json-udp"`
	Serial       stringList `yaml:"serial"`
	WiFiCapture  stringList `yaml:"wifi-capture"`
	SensorExpect duration   `yaml:"sensor-expect"`

	// Geofences and AllowList seed the replicated zone store (YAML only).
	Geofences    []gate.Geofence `yaml:"geofences"`
	AllowList    *gate.AllowList `yaml:"allowlist"`
	ShutdownWait duration        `yaml:"shutdown-timeout"`

	// Alerts (issue 19): --alerts, --mqtt-*; see alerts.go.
	alertConfig `yaml:",inline"`
}

func defaultConfig() config {
	return config{
		HTTPAddr:          "127.0.0.1:8080",
		HTTPMaxConns:      1024,
		IntakeSensorRate:  ingest.DefaultSensorLimits().FramesPerSecond,
		IntakeSensorBytes: byteSize(ingest.DefaultSensorLimits().BytesPerSecond),
		BasePath:          "/api/cuas",
		DataDir:           "./data",
		LogFormat:         "text",
		LogLevel:          "info",
		NATSListen:        "127.0.0.1:4222",
		JSMaxMemory:       256 << 20,
		JSMaxStore:        16 << 30,
		JSSync:            "1s",
		JSStartWait:       duration(bus.DefaultSetupTimeout),
		DiskLowMark:       64 << 20,
		RawMaxAge:         duration(24 * time.Hour),
		RawMaxBytes:       4 << 30,
		ObsMaxAge:         duration(time.Hour),
		ObsMaxBytes:       1 << 30,
		Replicas:          1,
		TrackTTL:          duration(60 * time.Second),
		EvalInterval:      duration(500 * time.Millisecond),
		ShutdownWait:      duration(15 * time.Second),
		// Track history (issue 20).
		History: true, HistoryMaxAge: duration(7 * 24 * time.Hour), HistoryMaxBytes: 8 << 30,
		ReadsbJSON:   true,
		ReadsbDrones: true,
		ReadsbFrames: true,
		SensorExpect: duration(60 * time.Second), // issue 25
	}
}

// flags binds every config field to a flag of fs.
func (c *config) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.ConfigFile, "config", "", "YAML configuration `FILE` (keys are the flag names; - for standard input)")
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "HTTP listen address `HOST:PORT`")
	fs.StringVar(&c.BasePath, "base-path", c.BasePath, "`PATH` prefix of the API and the map")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "`DIR` for JetStream data and keys")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log `FORMAT`: text or json")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log `LEVEL`: debug, info, warn or error")
	fs.StringVar(&c.NATSURL, "nats-url", c.NATSURL, "external NATS `URL`; empty starts an embedded nats-server with JetStream")
	fs.StringVar(&c.NATSListen, "nats-listen", c.NATSListen, "`HOST:PORT` of the embedded NATS client listener for sensors, or off")
	fs.StringVar(&c.NATSMonitor, "nats-monitor", "", "`HOST:PORT` of the embedded NATS server's HTTP monitoring (for nats-surveyor or the Prometheus NATS exporter; loopback unless --insecure-open); off when empty")
	fs.Var(&c.JSMaxMemory, "js-max-memory", "embedded JetStream memory limit `SIZE` (e.g. 256MiB)")
	fs.Var(&c.JSMaxStore, "js-max-store", "embedded JetStream file-store limit `SIZE` (e.g. 16GiB)")
	fs.StringVar(&c.JSSync, "js-sync", c.JSSync, "embedded JetStream fsync `POLICY`: an interval (e.g. 1s) or always")
	fs.Var(&c.JSStartWait, "js-start-timeout", "how long (`DURATION`) start-up retries a stream or bucket that a forming or recovering JetStream cluster cannot place yet")
	fs.Var(&c.DiskLowMark, "disk-low-mark", "free-space low mark `SIZE` of the data directory and JetStream's store: below it /readyz is degraded and writes are refused (503) until twice as much is free")
	fs.Var(&c.RawMaxAge, "raw-max-age", "how long (`DURATION`) raw frames are kept in CUAS_RAW")
	fs.Var(&c.RawMaxBytes, "raw-max-bytes", "byte cap `SIZE` of CUAS_RAW")
	fs.Var(&c.ObsMaxAge, "obs-max-age", "how long (`DURATION`) observations are kept in CUAS_OBS (with --publish-observations)")
	fs.BoolVar(&c.PublishObs, "publish-observations", c.PublishObs, "also publish decoded observations to CUAS_OBS for other consumers (fusion decodes raw frames in place and does not need them)")
	fs.Var(&c.ObsMaxBytes, "obs-max-bytes", "byte cap `SIZE` of CUAS_OBS")
	fs.IntVar(&c.Replicas, "replicas", c.Replicas, "`N` JetStream stream replicas (3 on a cluster)")
	fs.Var(&c.TrackTTL, "track-ttl", "how long (`DURATION`) a track lives without updates")
	fs.BoolVar(&c.ADSBFix, "adsb-fix", c.ADSBFix, "repair single-bit errors in DF17/18 frames in the pipeline")
	fs.Var(&c.BeastListen, "beast-listen", "accept Beast binary from receivers on `HOST:PORT` (like readsb's 30004); ?clock=gps for Radarcape-style GPS timestamps (default ?clock=12mhz); ?sensor=NAME names every connection (one receiver per port, else each is named after its peer), and &lat=..&lon=..&alt=.. places it for multilateration; repeatable (a port per receiver)")
	fs.Var(&c.AVRListen, "avr-listen", "accept AVR text from receivers on `HOST:PORT` (like readsb's 30001); ?sensor=NAME&lat=..&lon=..&alt=.. as --beast-listen; repeatable")
	fs.Var(&c.BeastConnect, "beast-connect", "connect to a receiver's Beast output `HOST:PORT` (port 30005), reconnecting; ?clock=gps for Radarcape-style GPS timestamps (default ?clock=12mhz); ?sensor=NAME&lat=..&lon=..&alt=.. names the receiver and places its antenna (alt above the WGS-84 ellipsoid) for multilateration; repeatable (one per receiver)")
	fs.StringVar(&c.AVRConnect, "avr-connect", c.AVRConnect, "connect to a receiver's AVR output `HOST:PORT` (port 30002), reconnecting")
	fs.StringVar(&c.MAVLinkKey, "mavlink-key", c.MAVLinkKey, "MAVLink 2 signing key (64 `HEX` digits) to verify signed frames")
	fs.BoolVar(&c.Demo, "demo", c.Demo, "run the traffic simulator in-process: aircraft, drones, a swarm and a breach near a demo site")
	fs.StringVar(&c.MAVLinkUDP, "mavlink-udp", c.MAVLinkUDP, "listen for MAVLink on this UDP address `HOST:PORT` (e.g. 127.0.0.1:14550)")
	fs.StringVar(&c.MAVLinkTCP, "mavlink-tcp", c.MAVLinkTCP, "connect to a MAVLink TCP server `HOST:PORT` (e.g. SITL 127.0.0.1:5760), reconnecting")
	fs.StringVar(&c.SigningKey, "signing-key", c.SigningKey, "Ed25519 receipt signing key `FILE` (PKCS#8 PEM); default: generated in the data dir")
	fs.BoolVar(&c.Unsigned, "unsigned", c.Unsigned, "emit receipts with the placeholder (unsigned) signature of the interface contract (docs/INTERFACE.md): an empty DSSE signature and unsigned checkpoints")
	fs.StringVar(&c.Instance, "instance", c.Instance, "instance `NAME` (letters, digits, '_' and '-'): names the ledger stream CUAS_LEDGER_<NAME> and the origin cuasd/<NAME> of a new log (default: an origin derived from the signing key)")
	fs.StringVar(&c.TileURL, "tile-url", c.TileURL, "online map tile `URL` template for the map (default: offline world outline)")
	fs.StringVar(&c.TileAttribution, "tile-attribution", c.TileAttribution, "attribution `TEXT` the --tile-url provider requires")
	fs.Var(&c.EvalInterval, "eval-interval", "how often (`DURATION`) the continuous gate evaluates every live track")
	c.gatePolicyFlag(fs) // issue 33
	fs.StringVar(&c.AuthTokens, "auth-tokens", c.AuthTokens, "YAML `FILE` of bearer tokens {name, role, sha256}; 'cuasd token new' prints an entry")
	fs.IntVar(&c.HTTPMaxConns, "http-max-conns", c.HTTPMaxConns, "at most `N` HTTP connections at once (more wait to be accepted); idle ones close after 2 minutes, silent ones after 5 s")
	c.sensorLimitFlags(fs) // issue 32
	fs.Float64Var(&c.RateLimit, "rate-limit", c.RateLimit, "`RATE` in requests per second per client (token or address), burst of the same; 0 = unlimited")
	fs.BoolVar(&c.InsecureOpen, "insecure-open", c.InsecureOpen, "allow an open API or NATS listener on a non-loopback address (logged loudly)")
	fs.StringVar(&c.MetricsToken, "metrics-token", c.MetricsToken, "bearer `TOKEN` required by /metrics (default: open for probes)")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "serve HTTPS with this certificate `FILE` (PEM)")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "private key `FILE` of --tls-cert (PEM)")
	fs.StringVar(&c.NATSUsers, "nats-users", c.NATSUsers, "YAML `FILE` of embedded NATS users {user, password, role}: sensor (publish frames), reader (read events) or admin")
	fs.StringVar(&c.NATSTLSCert, "nats-tls-cert", c.NATSTLSCert, "TLS certificate `FILE` of the embedded NATS listener (PEM)")
	fs.StringVar(&c.NATSTLSKey, "nats-tls-key", c.NATSTLSKey, "private key `FILE` of --nats-tls-cert (PEM)")
	fs.Var(&c.ShutdownWait, "shutdown-timeout", "how long (`DURATION`) graceful shutdown may take")
	c.alertConfig.flags(fs) // issue 19

	// Track history (issue 20).
	fs.BoolVar(&c.History, "history", c.History, "record every track position in <data-dir>/history.db for /v1/tracks/{id}/history and /v1/history")
	fs.Var(&c.HistoryMaxAge, "history-max-age", "delete track history older than `DURATION` (0 = keep)")
	fs.Var(&c.HistoryMaxBytes, "history-max-bytes", "byte cap `SIZE` of the track history, oldest deleted first (0 = none)")
	c.cotFlags(fs)    // issue 18
	c.readsbFlags(fs) // issue 21
	c.sensorFlags(fs) // issue 25
}

// sensorLimitFlags binds the per-sensor rate and byte limits of the
// intake and the decoders (issue 32).
func (c *config) sensorLimitFlags(fs *flag.FlagSet) {
	fs.Float64Var(&c.IntakeSensorRate, "intake-sensor-rate", c.IntakeSensorRate, "at most `FRAMES` a second from one sensor through the single-frame intake (cuas.in.>); 0 = unlimited")
	fs.Var(&c.IntakeSensorBytes, "intake-sensor-bytes", "at most `SIZE` of frames a second from one sensor through the single-frame intake; 0 = unlimited")
	fs.Float64Var(&c.RawSensorRate, "raw-sensor-rate", c.RawSensorRate, "decode at most `FRAMES` a second (in JetStream's storage time) of what one sensor publishes to cuas.raw.>, skipping and counting the rest; for sensors you give raw publish rights but do not trust; it also limits a fast replay of that sensor; 0 = unlimited (default)")
	fs.Var(&c.RawSensorBytes, "raw-sensor-bytes", "decode at most `SIZE` of frames a second of one sensor's cuas.raw.> messages, as --raw-sensor-rate; 0 = unlimited (default)")
}

// sensorFlags binds the field sensor inputs' flags (issue 25; the
// repeatable stringList is cot.go's).
func (c *config) sensorFlags(fs *flag.FlagSet) {
	fs.Var(&c.ZMQConnect, "zmq-connect", "subscribe to a WarDragon/DragonSync ZeroMQ feed: `[KIND=]tcp://HOST:PORT[?sensor=NAME&lat=..&lon=..]` "+
		"(4224 Remote ID, 4221 dji=, 4225 status=); repeatable or comma-separated")
	fs.Var(&c.JSONUDP, "json-udp", "receive flat JSON drone messages (ESP32 / dronecot forwarders) on `HOST:PORT[?sensor=NAME&lat=..&lon=..]`; repeatable")
	fs.Var(&c.Serial, "serial", "read newline-delimited JSON from an ESP32 Remote ID scanner at `PATH[:BAUD][?sensor=NAME&lat=..&lon=..]` (default 115200 baud); repeatable")
	fs.Var(&c.WiFiCapture, "wifi-capture", "capture Remote ID beacons and NAN frames on a Linux 802.11 interface already in monitor mode: `IFACE[?sensor=NAME&lat=..&lon=..]` (AF_PACKET; root or CAP_NET_RAW); repeatable")
	fs.Var(&c.SensorExpect, "sensor-expect", "how long (`DURATION`) a sensor may be silent before /v1/sensors and /readyz show it as down")
}

const serveUsage = `Usage:
  cuasd serve [flags]

Runs the service: HTTP API and map, the embedded NATS server with JetStream
(unless --nats-url), the decoders, fusion, the continuous gate and the
receipt ledger. Every flag is also an environment variable CUAS_<FLAG>
(upper case, '-' as '_') and a key of the --config YAML file; flags win over
the environment, which wins over the file. One FILE flag may be - for
standard input (a key or token file piped from a secret store stays in
memory).
`

// parseConfig applies the file, the environment and the flags, in
// increasing precedence.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	c := defaultConfig()
	fs := newFlagSet("cuasd serve", serveUsage, nil, stderr, stderr)
	c.flags(fs)

	// Find --config first (flag or CUAS_CONFIG), so the file sits under
	// the environment and the flags.
	file := configFileArg(args, getenv("CUAS_CONFIG"))
	if file != "" {
		if err := c.load(file); err != nil {
			return c, err
		}
	}
	if err := setFromEnv(fs, getenv); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err := givenOnce(args, receiverFlagNames...); err != nil {
		return c, err
	}
	c.ConfigFile = file
	c.TAKP12Password = getenv("CUAS_TAK_P12_PASSWORD") // issue 18; a secret, never a flag
	if err := stdinFileFlags(fs, file); err != nil {   // - for any FILE flag (issue 24)
		return c, err
	}
	return c, c.validate()
}

// receiverFlagNames are the receiver flags that take one address (the
// Mode S receiver flags are repeatable): a second would replace the first.
var receiverFlagNames = []string{"avr-connect", "sbs-connect"}

// givenOnce refuses a flag of names given twice on the command line. The
// flag package keeps the last value, so an operator giving each receiver
// its own --beast-listen port silently lost all but the last one.
func givenOnce(args []string, names ...string) error {
	count := map[string]int{}
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(names, name) {
			if count[name]++; count[name] == 2 {
				return fmt.Errorf("--%s is given twice: it takes one address", name)
			}
		}
	}
	return nil
}

// configFileArg is the value of the last --config in args, else def.
func configFileArg(args []string, def string) string {
	file := def
	for i, a := range args {
		switch {
		case a == "--config" || a == "-config":
			if i+1 < len(args) {
				file = args[i+1]
			}
		case strings.HasPrefix(a, "--config="), strings.HasPrefix(a, "-config="):
			file = a[strings.Index(a, "=")+1:]
		}
	}
	return file
}

// load applies the YAML file, refusing keys that are not flags.
func (c *config) load(file string) error {
	b, err := readInput(file) // - is standard input (issue 24)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", inputName(file), err)
	}
	return nil
}

// setFromEnv sets every flag but --config from its CUAS_<FLAG> variable,
// when set, and returns the first invalid one.
func setFromEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := "CUAS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && f.Name != "config" {
			if err := fs.Set(f.Name, v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%s: %w", name, err)
			}
		}
	})
	return envErr
}

// instance names this instance for partition ownership and events:
// --instance, or "default". The ledger alone tells "not named" apart (its
// default origin is then unique to the log).
func (c *config) instance() string {
	if c.Instance == "" {
		return "default"
	}
	return c.Instance
}

func (c *config) validate() error {
	var errs []error
	errs = c.validateCore(errs)
	errs = c.validateZones(errs)
	errs = c.validateHTTP(errs)
	errs = c.validateAddrs(errs)
	errs = append(errs, c.validateAlerts())     // issue 19
	errs = append(errs, c.validateGatePolicy()) // issue 33
	errs = c.validateMLAT(errs)                 // issue 31
	if err := c.cotValidate(); err != nil {     // issue 18
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateCore checks the logging, base path, history, JetStream sync and
// MAVLink signing flags, appending their errors to errs.
func (c *config) validateCore(errs []error) []error {
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format must be text or json, got %q", c.LogFormat))
	}
	if !strings.HasPrefix(c.BasePath, "/") || strings.HasSuffix(c.BasePath, "/") {
		errs = append(errs, fmt.Errorf("--base-path must start with / and not end with one, got %q", c.BasePath))
	}
	if c.HistoryMaxAge < 0 {
		errs = append(errs, fmt.Errorf("--history-max-age must not be negative (0 keeps history), got %s", c.HistoryMaxAge.String()))
	}
	if c.JSStartWait <= 0 {
		errs = append(errs, fmt.Errorf("--js-start-timeout must be positive, got %s", c.JSStartWait.String()))
	}
	if c.JSSync != "always" {
		if _, err := time.ParseDuration(c.JSSync); err != nil {
			errs = append(errs, fmt.Errorf("--js-sync must be a duration or always, got %q", c.JSSync))
		}
	}
	if c.MAVLinkKey != "" {
		if k, err := hex.DecodeString(c.MAVLinkKey); err != nil || len(k) != 32 {
			// Never quote the value: it is a secret.
			errs = append(errs, errors.New("--mavlink-key must be 64 hex digits (32 bytes)"))
		}
	}
	return errs
}

// validateZones checks the geofences (each with an id) and the allow-list
// of the config file.
func (c *config) validateZones(errs []error) []error {
	for i := range c.Geofences {
		if err := c.Geofences[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("geofences[%d]: %w", i, err))
		}
		if c.Geofences[i].ID == "" {
			errs = append(errs, fmt.Errorf("geofences[%d]: an id is required", i))
		}
	}
	if c.AllowList != nil {
		if err := c.AllowList.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("allowlist: %w", err))
		}
	}
	return errs
}

// validateHTTP checks the map tiles, rate limit, TLS and replica flags.
func (c *config) validateHTTP(errs []error) []error {
	if err := (web.Options{TileURL: c.TileURL, TileAttribution: c.TileAttribution}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--tile-url: %w", err))
	}
	if c.RateLimit < 0 {
		errs = append(errs, errors.New("--rate-limit must not be negative"))
	}
	if c.IntakeSensorRate < 0 || c.IntakeSensorRate != c.IntakeSensorRate {
		errs = append(errs, errors.New("--intake-sensor-rate must not be negative (0 = unlimited)"))
	}
	if c.RawSensorRate < 0 || c.RawSensorRate != c.RawSensorRate {
		errs = append(errs, errors.New("--raw-sensor-rate must not be negative (0 = unlimited)"))
	}
	if c.HTTPMaxConns < 1 {
		errs = append(errs, errors.New("--http-max-conns must be at least 1"))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key go together"))
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		errs = append(errs, fmt.Errorf("--replicas must be 1..5, got %d", c.Replicas))
	}
	return errs
}

// validateAddrs checks every HOST:PORT flag at start (issue 32): a
// malformed --beast-connect address used to be retried for ever as if
// the receiver were down. An address to connect to needs a host and a
// port 1..65535; one to listen on may leave the host empty (every
// interface) and use port 0 (any free port).
func (c *config) validateAddrs(errs []error) []error {
	type addrFlag struct {
		flag, addr string
		dial       bool
	}
	list := []addrFlag{
		{"--http-addr", c.HTTPAddr, false}, {"--nats-listen", c.NATSListen, false}, {"--nats-monitor", c.NATSMonitor, false},
		{"--mavlink-udp", c.MAVLinkUDP, false},
		{"--sbs-listen", c.SBSListen, false}, {"--beast-out-listen", c.BeastOutListen, false},
		{"--avr-connect", c.AVRConnect, true}, {"--sbs-connect", c.SBSConnect, true},
		{"--beast-out-connect", c.BeastOutConnect, true}, {"--mavlink-tcp", c.MAVLinkTCP, true},
	}
	for _, r := range c.receiverFlags() {
		// options after '?' (clock, and the receiver's name and place)
		// are checked with the receiver (issues 30, 31)
		addr, _, _ := strings.Cut(r.spec, "?")
		list = append(list, addrFlag{r.flag, addr, !r.listen})
	}
	for _, a := range list {
		if a.addr == "" || a.flag == "--nats-listen" && !bus.Listens(a.addr) {
			continue
		}
		if err := checkAddr(a.addr, a.dial); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", a.flag, a.addr, err))
		}
	}
	return errs
}

// checkAddr says what is wrong with a HOST:PORT address, nil when nothing.
func checkAddr(addr string, dial bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT (IPv6 in brackets, [::1]:30005): %w", err)
	}
	p, err := strconv.Atoi(port)
	switch {
	case err != nil || p < 0 || p > 65535:
		return fmt.Errorf("the port must be a number 0..65535, got %q", port)
	case dial && p == 0:
		return errors.New("the port to connect to must be 1..65535")
	case dial && host == "":
		return errors.New("a host to connect to is needed")
	}
	return nil
}

// mavlinkKey returns the configured signing key, nil when none.
func (c *config) mavlinkKey() []byte {
	if c.MAVLinkKey == "" {
		return nil
	}
	k, _ := hex.DecodeString(c.MAVLinkKey) // validated
	return k
}

// Issue 18: Cursor-on-Target / TAK output flags (package output/cot; the
// sinks are built in cot.go).

// CoTFlags configure the Cursor-on-Target / TAK outputs (issue 18,
// package output/cot): every --cot-udp and --tak-server is a sink of its
// own.
type CoTFlags struct {
	CoTUDP       stringList `yaml:"cot-udp"`
	CoTTTL       int        `yaml:"cot-ttl"`
	CoTInterface string     `yaml:"cot-interface"`
	CoTQueue     int        `yaml:"cot-queue"`
	TAKServer    stringList `yaml:"tak-server"`
	TAKCert      string     `yaml:"tak-cert"`
	TAKKey       string     `yaml:"tak-key"`
	TAKCA        string     `yaml:"tak-ca"`
	TAKP12       string     `yaml:"tak-p12"`
	// TAKP12PasswordFile holds the PKCS#12 password; the environment
	// variable CUAS_TAK_P12_PASSWORD is the other way to give it. The
	// password is never a flag (it would show in the process list).
	TAKP12PasswordFile string `yaml:"tak-p12-password-file"`
	TAKP12Password     string `yaml:"-"`
}

// readsbFlags are the flags of the readsb-compatible outputs and the SBS
// input (issue 21).
func (c *config) readsbFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.JSONDir, "json-dir", c.JSONDir, "write readsb's aircraft.json, receiver.json, stats.json and history_N.json to `DIR` every second (readsb --write-json)")
	fs.BoolVar(&c.ReadsbJSON, "readsb-json", c.ReadsbJSON, "serve readsb's JSON documents at {base}/data/*.json (for tar1090)")
	fs.BoolVar(&c.ReadsbDrones, "readsb-drones", c.ReadsbDrones, "list Remote ID and MAVLink tracks in the readsb JSON and SBS outputs as ~hex entries")
	fs.BoolVar(&c.ReadsbFrames, "readsb-frames", c.ReadsbFrames, "count each aircraft's messages and rssi in aircraft.json from the raw Mode S frames, as readsb does (else: the track's observations)")
	fs.StringVar(&c.ReceiverLocation, "receiver-location", c.ReceiverLocation, "`LAT,LON` of the receiver for receiver.json (tar1090 centres on it)")
	fs.StringVar(&c.SBSListen, "sbs-listen", c.SBSListen, "serve SBS BaseStation lines on `HOST:PORT` (like readsb's 30003): one line per decoded Mode S message")
	fs.BoolVar(&c.SBSReduce, "sbs-reduce", c.SBSReduce, "with --sbs-listen, write per track from the track events (at most one update a second per track) instead of one line per message")
	fs.StringVar(&c.SBSConnect, "sbs-connect", c.SBSConnect, "read SBS BaseStation lines from `HOST:PORT` (a decoder's 30003, VRS), reconnecting")
	fs.StringVar(&c.BeastOutListen, "beast-out-listen", c.BeastOutListen, "serve received frames as Beast on `HOST:PORT` (like readsb's 30005)")
	fs.StringVar(&c.BeastOutConnect, "beast-out-connect", c.BeastOutConnect, "push received frames as Beast to the aggregator at `HOST:PORT`, reconnecting")
	fs.BoolVar(&c.BeastOutAll, "beast-out-all", c.BeastOutAll, "relay frames whose CRC does not check too (default: CRC-checked frames only)")
	fs.BoolVar(&c.DemoOutputs, "demo-outputs", c.DemoOutputs, "let simulated traffic (--demo, cuasd simulate) out through Beast out, SBS and aircraft.json too (marked \"simulated\" in aircraft.json); by default those feeds carry only what was received")
}

func (c *CoTFlags) cotFlags(fs *flag.FlagSet) {
	fs.Var(&c.CoTUDP, "cot-udp", "send Cursor-on-Target to this UDP `HOST:PORT` (unicast, or multicast such as ATAK's 239.2.3.1:6969; udp://HOST:PORT?protocol=1 for TAK Protocol version 1); repeatable")
	fs.IntVar(&c.CoTTTL, "cot-ttl", 1, "multicast `TTL` of --cot-udp (1 keeps it on the local network)")
	fs.StringVar(&c.CoTInterface, "cot-interface", "", "network `INTERFACE` for --cot-udp multicast (default: the OS's choice)")
	fs.IntVar(&c.CoTQueue, "cot-queue", cot.DefaultQueue, "`N` events each CoT sink holds while it is slow or down (then it drops, counted)")
	fs.Var(&c.TAKServer, "tak-server", "stream CoT to a TAK Server at `URL`: tcp://HOST:8087 or ssl://HOST:8089 (mutual TLS); ?protocol=1 asks the server for TAK Protocol version 1 (XML if it does not agree); repeatable")
	fs.StringVar(&c.TAKCert, "tak-cert", "", "client certificate `FILE` (PEM) for ssl:// TAK Servers")
	fs.StringVar(&c.TAKKey, "tak-key", "", "private key `FILE` (PEM) of --tak-cert")
	fs.StringVar(&c.TAKCA, "tak-ca", "", "CA certificate `FILE` (PEM) that signed the TAK Server's certificate (default: system roots)")
	fs.StringVar(&c.TAKP12, "tak-p12", "", "client certificate and key as the PKCS#12 `FILE` a TAK Server admin hands out (instead of --tak-cert/--tak-key)")
	fs.StringVar(&c.TAKP12PasswordFile, "tak-p12-password-file", "", "`FILE` holding the --tak-p12 password (or set CUAS_TAK_P12_PASSWORD)")
}
