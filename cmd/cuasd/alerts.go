package main

// Alerts (issue 19): the --alerts rule file, webhooks and MQTT. The flags
// and their checks live here so that config.go, serve.go and http.go each
// gain one line.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/alert"
	"github.com/cuasd/cuasd/output/mqtt"
	"github.com/cuasd/cuasd/output/webhook"
)

// alertConfig is the alert part of the configuration.
type alertConfig struct {
	// Alerts is the rule file (--alerts FILE, or alerts: FILE in the main
	// configuration) or the rules themselves inline under alerts:.
	Alerts          alertsSource `yaml:"alerts"`
	AlertsPublicURL string       `yaml:"alerts-public-url"`
	MQTTURL         string       `yaml:"mqtt-url"`
	MQTTPrefix      string       `yaml:"mqtt-prefix"`
	MQTTDiscovery   string       `yaml:"mqtt-discovery-prefix"`
	MQTTCA          string       `yaml:"mqtt-ca"`
	MQTTCert        string       `yaml:"mqtt-cert"`
	MQTTKey         string       `yaml:"mqtt-key"`
	// MQTTCredentials is a file: user name, then password (never logged).
	MQTTCredentials string `yaml:"mqtt-credentials"`
	// MQTTAircraft is "LAT,LON,KM": the aircraft within KM of LAT,LON are
	// Home Assistant device trackers too (drones always are).
	MQTTAircraft string `yaml:"mqtt-aircraft"`

	rules *alert.Config
}

// alertsSource is a rule file name, or rules inline in the main
// configuration.
type alertsSource struct {
	File string
	Node *yaml.Node
}

func (a *alertsSource) String() string     { return a.File }
func (a *alertsSource) Set(s string) error { a.File, a.Node = s, nil; return nil }
func (a *alertsSource) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		a.File = n.Value
		return nil
	}
	a.Node = n
	return nil
}

func (c *alertConfig) flags(fs *flag.FlagSet) {
	fs.Var(&c.Alerts, "alerts", "alert rule `FILE` (YAML: sinks and rules; see docs/ALERTS.md; - for standard input); also inline under alerts: in --config")
	fs.StringVar(&c.AlertsPublicURL, "alerts-public-url", "", "public base `URL` of this cuasd (e.g. https://cuas.example.org) for the receipt links in alerts; default: relative links")
	fs.StringVar(&c.MQTTURL, "mqtt-url", "", "MQTT broker `URL` for alerts and Home Assistant (mqtt://host:1883 or mqtts://host:8883)")
	fs.StringVar(&c.MQTTPrefix, "mqtt-prefix", "cuas", "`PREFIX` of cuasd's MQTT topics")
	fs.StringVar(&c.MQTTDiscovery, "mqtt-discovery-prefix", "homeassistant", "Home Assistant MQTT discovery `PREFIX`, or off")
	fs.StringVar(&c.MQTTCA, "mqtt-ca", "", "CA bundle `FILE` (PEM) trusted for mqtts://")
	fs.StringVar(&c.MQTTCert, "mqtt-cert", "", "client certificate `FILE` (PEM) for mqtts://")
	fs.StringVar(&c.MQTTKey, "mqtt-key", "", "private key `FILE` of --mqtt-cert (PEM)")
	fs.StringVar(&c.MQTTCredentials, "mqtt-credentials", "", "`FILE` with the MQTT user name on line 1 and the password on line 2")
	fs.StringVar(&c.MQTTAircraft, "mqtt-aircraft", "", "also show the ADS-B aircraft within a circle on Home Assistant's map: `LAT,LON,KM` (e.g. 52.31,4.76,15); drones are always shown")
}

// validateAlerts parses and checks the rule file (keys, sinks, durations,
// secret files, and zones when the configuration seeds them), naming the
// file, line and key of each problem.
func (c *config) validateAlerts() error {
	a := &c.alertConfig
	errs := a.checkURLs()
	if a.Alerts.File == "" && a.Alerts.Node == nil {
		return errors.Join(errs...)
	}
	rules, name, err := a.parseRules(c.ConfigFile)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if err := rules.Resolve(name, c.seededZones(), nil); err != nil {
		errs = append(errs, err)
	}
	for _, s := range rules.Sinks {
		if s.MQTT && a.MQTTURL == "" {
			errs = append(errs, fmt.Errorf("alerts %s: sink %q is mqtt: true but --mqtt-url is not set", name, s.Name))
		}
	}
	a.rules = rules
	return errors.Join(errs...)
}

func (a *alertConfig) checkURLs() (errs []error) {
	if a.MQTTURL != "" {
		if u, err := url.Parse(a.MQTTURL); err != nil || (u.Scheme != "mqtt" && u.Scheme != "mqtts") || u.Host == "" || u.User != nil {
			errs = append(errs, errors.New("--mqtt-url must be mqtt://host:port or mqtts://host:port, without credentials (use --mqtt-credentials)"))
		}
	}
	if _, err := a.aircraftCircle(); err != nil {
		errs = append(errs, err)
	}
	if a.AlertsPublicURL != "" {
		if u, err := url.Parse(a.AlertsPublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("--alerts-public-url must be an http(s) URL"))
		}
	}
	return errs
}

func (a *alertConfig) parseRules(configFile string) (*alert.Config, string, error) {
	if a.Alerts.Node != nil {
		name := configFile + " (alerts:)"
		r, err := alert.ParseNode(name, a.Alerts.Node)
		return r, name, err
	}
	name := inputName(a.Alerts.File)
	if err := oneStdin(map[string]string{"--config": configFile, "--alerts": a.Alerts.File}); err != nil {
		return nil, name, err
	}
	b, err := readInput(a.Alerts.File) // - is standard input (issue 24)
	if err != nil {
		return nil, name, &alert.Error{File: name, Err: err}
	}
	r, err := alert.Parse(name, b)
	return r, name, err
}

// seededZones are the zone ids the configuration seeds (nil when it seeds
// none: the zones then come from the replicated store, checked at start).
func (c *config) seededZones() []string {
	seed := c.Geofences
	if c.Demo && len(seed) == 0 {
		seed = demoGeofences()
	}
	if len(seed) == 0 {
		return nil
	}
	ids := make([]string, len(seed))
	for i, g := range seed {
		ids[i] = g.ID
	}
	return ids
}

// alertStoreRef hands the alert store to the HTTP layer, which starts
// before the outputs have opened it.
type alertStoreRef struct{ p atomic.Pointer[alert.Store] }

var errAlertsStarting = errors.New("the alert store is starting")

func (r *alertStoreRef) List(ctx context.Context, f alert.Filter) ([]alert.Record, error) {
	if s := r.p.Load(); s != nil {
		return s.List(ctx, f)
	}
	return nil, errAlertsStarting
}

func (r *alertStoreRef) Get(ctx context.Context, id string) (alert.Record, bool, error) {
	if s := r.p.Load(); s != nil {
		return s.Get(ctx, id)
	}
	return alert.Record{}, false, errAlertsStarting
}

// alertStore is httpapi.Deps.Alerts: nil without a rule file.
func (s *service) alertStore() httpapi.AlertStore {
	if s.cfg.rules == nil {
		return nil
	}
	return &s.alerts
}

// alertOutputs are the outputs of issue 19: the rule engine, one output
// per webhook sink and the MQTT output.
func (s *service) alertOutputs() ([]output.Output, error) {
	rules := s.cfg.rules
	if rules == nil && s.cfg.MQTTURL == "" {
		return nil, nil
	}
	if rules == nil {
		rules = &alert.Config{} // MQTT status and Home Assistant only
	}
	// The stream and bucket wait for a recovering cluster as the bus's do.
	ctx, cancel := context.WithTimeout(context.Background(), max(30*time.Second, time.Duration(s.cfg.JSStartWait)))
	defer cancel()
	zones, err := s.zones.Geofences(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	var mz []mqtt.Zone
	for _, z := range zones {
		ids, mz = append(ids, z.ID), append(mz, mqtt.Zone{ID: z.ID, Name: z.Name})
	}
	// Zones the configuration does not seed come from the replicated store.
	if err := rules.CheckZones(inputName(s.cfg.Alerts.File), ids); err != nil {
		return nil, err
	}
	m := alert.NewMetrics(s.reg)
	m.Declare(rules) // every rule and sink at 0 before the first alert (issue 24)
	eng, store, err := alert.Open(ctx, s.bus.JetStream(), rules, alert.Options{ReceiptURL: s.receiptURL, Metrics: m, Logger: s.log, Replicas: s.cfg.Replicas})
	if err != nil {
		return nil, err
	}
	s.alerts.p.Store(store)
	d := alert.Deliverer{JS: s.bus.JetStream(), Store: store, Metrics: m, Logger: s.log}
	s.countDrops(eng) // what its bounded queue dropped, at 0 from the start (issue 24)
	outs := []output.Output{eng}
	var mqttSinks []alert.SinkConfig
	for _, sc := range rules.Sinks {
		if sc.MQTT {
			mqttSinks = append(mqttSinks, sc)
			continue
		}
		o, err := webhook.NewOutput(sc, d)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	if s.cfg.MQTTURL != "" {
		o, err := s.mqttOutput(d, mz, mqttSinks)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// mqttOutput is the MQTT output: status, Home Assistant discovery and the
// mqtt: true sinks' alerts.
func (s *service) mqttOutput(d alert.Deliverer, zones []mqtt.Zone, sinks []alert.SinkConfig) (*mqtt.Output, error) {
	aircraft, _ := s.cfg.aircraftCircle() // checked with the configuration
	o, err := mqtt.New(mqtt.Config{URL: s.cfg.MQTTURL, Prefix: s.cfg.MQTTPrefix, DiscoveryPrefix: s.cfg.MQTTDiscovery, Node: s.cfg.Instance,
		CAFile: s.cfg.MQTTCA, CertFile: s.cfg.MQTTCert, KeyFile: s.cfg.MQTTKey, CredentialsFile: s.cfg.MQTTCredentials,
		Zones: zones, Sinks: sinks, Deliverer: d, Logger: s.log, Aircraft: aircraft,
		// Each MQTT sink's delivery loop is a supervised component of
		// its own (issue 32: one that ended stayed down, unseen).
		SinkReporter: func(name string) lifecycle.Reporter {
			return s.status.Reporter("mqtt alert sink "+name, lifecycle.Output)
		}})
	if err != nil {
		return nil, err
	}
	s.countDrops(o)
	return o, nil
}

// receiptURL is where an alert's receipt is fetched.
func (s *service) receiptURL(i int64) string {
	return s.cfg.AlertsPublicURL + s.cfg.BasePath + "/v1/receipt/" + strconv.FormatInt(i, 10)
}

// aircraftCircle parses --mqtt-aircraft (nil when unset).
func (a *alertConfig) aircraftCircle() (*mqtt.Circle, error) {
	if a.MQTTAircraft == "" {
		return nil, nil
	}
	f := strings.Split(a.MQTTAircraft, ",")
	var v [3]float64
	var err error
	for i := 0; i < len(f) && i < 3 && err == nil; i++ {
		v[i], err = strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
	}
	if len(f) != 3 || err != nil || v[0] < -90 || v[0] > 90 || v[1] < -180 || v[1] > 180 || !(v[2] > 0 && v[2] <= 1000) {
		return nil, fmt.Errorf("--mqtt-aircraft must be LAT,LON,KM (degrees, and a radius of 0 < KM <= 1000), e.g. 52.31,4.76,15; got %q", a.MQTTAircraft)
	}
	return &mqtt.Circle{Lat: v[0], Lon: v[1], RadiusM: v[2] * 1000}, nil
}
