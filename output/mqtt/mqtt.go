// Package mqtt publishes cuasd's alerts and a Home Assistant view of the
// threat picture to an MQTT broker (issue 19), with the Eclipse Paho
// client:
//
//	<prefix>/status                    retained "online"; "offline" on clean
//	                                   shutdown and as the last will
//	<prefix>/alerts/<zone>             alert messages (QoS 1), the webhook body
//	<prefix>/zone/<zone>/breach        retained ON/OFF: a track inside the zone
//	<prefix>/threats/active            retained number of tracks at alert or above
//	<prefix>/threats/max_lambda        retained highest Λ among live threats
//	<prefix>/tracker/<track>/attributes
//	                                   retained latitude/longitude/gps_accuracy
//	                                   of each live drone (and aircraft in
//	                                   Config.Aircraft); emptied when it ends
//	homeassistant/<component>/<node>/<object>/config
//	                                   retained MQTT discovery: a binary sensor
//	                                   per zone, the two sensors above and a
//	                                   device_tracker per tracked drone
//
// Alerts are read from the sink's durable consumer (package alert), so an
// alert published while the broker was down is sent once it is back.
package mqtt

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/secretfile"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/alert"
)

// Config is the broker and what to publish.
type Config struct {
	// URL is mqtt://host:1883 or mqtts://host:8883.
	URL string
	// Prefix of cuasd's own topics (default "cuas").
	Prefix string
	// DiscoveryPrefix is Home Assistant's discovery prefix (default
	// "homeassistant"); "off" publishes no discovery.
	DiscoveryPrefix string
	// Node is the Home Assistant node id and client id suffix (the cuasd
	// instance name).
	Node string
	// CAFile, CertFile and KeyFile configure mqtts: the CAs to trust and a
	// client certificate.
	CAFile, CertFile, KeyFile string
	// CredentialsFile holds the user name on its first line and the
	// password on its second (never logged).
	CredentialsFile string
	// Zones are the geofences known at start (more arrive as zone events).
	Zones []Zone
	// Aircraft, when set, also shows the ADS-B aircraft inside it as
	// device trackers (drones are always shown).
	Aircraft *Circle
	// Sinks are the rule file's mqtt sinks whose alerts this output sends.
	Sinks []alert.SinkConfig
	// Deliverer carries the stream, store and metrics for the sinks.
	Deliverer alert.Deliverer
	// SinkReporter returns the reporter of one sink's delivery loop, which
	// is supervised on its own (lifecycle.Retry): its restarts and state
	// are its own component's. Nil: the output's reporter.
	SinkReporter func(sink string) lifecycle.Reporter
	Logger       *slog.Logger
}

// Zone is a geofence as discovery names it.
type Zone struct{ ID, Name string }

// Output is the MQTT output.
type Output struct {
	cfg      Config
	opts     *paho.ClientOptions
	state    *picture
	trackers *trackers
	q        *output.Queue[[]byte]
}

// New checks cfg and reads its files; it does not connect.
func New(cfg Config) (*Output, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "cuas"
	}
	if cfg.DiscoveryPrefix == "" {
		cfg.DiscoveryPrefix = "homeassistant"
	}
	if cfg.Node == "" {
		cfg.Node = "default"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if strings.ContainsAny(cfg.Prefix+cfg.DiscoveryPrefix, "#+") || strings.HasSuffix(cfg.Prefix, "/") {
		return nil, &alert.Error{Msg: "mqtt: --mqtt-prefix must be a topic without wildcards or a trailing /"}
	}
	opts, err := clientOptions(&cfg)
	if err != nil {
		return nil, err
	}
	o := &Output{cfg: cfg, opts: opts, state: newPicture(), trackers: newTrackers(cfg.Aircraft), q: output.NewQueue[[]byte](4096)}
	for _, z := range cfg.Zones {
		o.state.zone(z.ID, z.Name)
	}
	return o, nil
}

// clientOptions builds paho's options: the broker, TLS, credentials, and
// the retained "offline" last will.
func clientOptions(cfg *Config) (*paho.ClientOptions, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "mqtt" && u.Scheme != "mqtts") || u.Host == "" || u.User != nil {
		return nil, &alert.Error{Msg: "mqtt: --mqtt-url must be mqtt://host:port or mqtts://host:port (credentials go in --mqtt-credentials)"}
	}
	o := paho.NewClientOptions().AddBroker(cfg.URL).SetClientID("cuasd-"+cfg.Node).
		SetCleanSession(true).SetAutoReconnect(true).SetMaxReconnectInterval(30*time.Second).
		SetConnectTimeout(10*time.Second).
		SetKeepAlive(30*time.Second).SetOrderMatters(false).
		SetBinaryWill(cfg.Prefix+"/status", []byte("offline"), 1, true)
	if u.Scheme == "mqtts" {
		t, err := tlsConfig(cfg)
		if err != nil {
			return nil, err
		}
		o.SetTLSConfig(t)
	}
	if cfg.CredentialsFile != "" {
		b, err := secretfile.Read(cfg.CredentialsFile, alert.MaxSecretFile)
		if err != nil {
			return nil, &alert.Error{Msg: "mqtt: --mqtt-credentials", Err: err}
		}
		user, pass, _ := strings.Cut(strings.TrimRight(string(b), "\r\n"), "\n")
		o.SetUsername(strings.TrimSpace(user)).SetPassword(strings.TrimRight(pass, "\r\n"))
	}
	return o, nil
}

func tlsConfig(cfg *Config) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, &alert.Error{Msg: "mqtt: --mqtt-ca", Err: err}
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, &alert.Error{Msg: "mqtt: --mqtt-ca holds no PEM certificate"}
		}
	}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		c, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, &alert.Error{Msg: "mqtt: --mqtt-cert/--mqtt-key", Err: err}
		}
		t.Certificates = []tls.Certificate{c}
	}
	return t, nil
}

// Name implements output.Output.
func (o *Output) Name() string {
	u, _ := url.Parse(o.cfg.URL)
	return "mqtt " + u.Host
}

// Dropped is how many events the output's bounded queue dropped while it
// fell behind.
func (o *Output) Dropped() uint64 { return o.q.Dropped() }

// Run implements output.Output: it connects (and reconnects), announces
// itself and the discovery configs, keeps the sensors current from the
// events and sends the sinks' alerts, until ctx ends; then it publishes
// "offline" and disconnects.
func (o *Output) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	opts := *o.opts
	opts.SetOnConnectHandler(func(c paho.Client) {
		o.announce(c)
		rep.Up()
	})
	opts.SetConnectionLostHandler(func(_ paho.Client, err error) { rep.Retrying(fmt.Errorf("mqtt: connection lost: %w", err)) })
	c := paho.NewClient(&opts)
	defer func() {
		t := c.Publish(o.cfg.Prefix+"/status", 1, true, "offline")
		t.WaitTimeout(5 * time.Second)
		c.Disconnect(500)
	}()
	unsub, err := o.listen(ev)
	if err != nil {
		return err
	}
	defer unsub()
	// Connected, the output says "online" and up: only once it hears the
	// events it publishes (a track event published just after "online"
	// was lost when the connection won the race with the subscriptions).
	go o.connect(ctx, c, rep)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, s := range o.cfg.Sinks {
		d := o.cfg.Deliverer
		d.Sink, d.Config = &sink{o: o, c: c}, s
		srep := rep
		if o.cfg.SinkReporter != nil {
			srep = o.cfg.SinkReporter(s.Name)
		}
		// A consumer error (a missed heartbeat after a stall, a lost
		// consumer) ends one run of the sink's loop; its supervisor runs it
		// again on the same durable consumer, so nothing unacknowledged is
		// skipped.
		wg.Go(func() {
			_ = lifecycle.Retry(srep, 30*time.Second, func(ctx context.Context, rep lifecycle.Reporter) error {
				err := d.Run(ctx, rep)
				if err != nil && ctx.Err() == nil {
					o.cfg.Logger.Warn("mqtt alert sink failed; restarting", "sink", s.Name, "err", err)
				}
				return err
			})(ctx)
		})
	}
	o.loop(ctx, c)
	return nil
}

// listen subscribes to the events the output publishes from, queueing
// them; unsubscribe ends every subscription.
func (o *Output) listen(ev output.Events) (unsubscribe func(), err error) {
	var unsubs []func()
	unsubscribe = func() {
		for _, u := range unsubs {
			u()
		}
	}
	put := func(m *nats.Msg) { o.q.Put(bytes.Clone(m.Data)) }
	tracks := func(m *nats.Msg) {
		// cuas.track.{protocol}.{key}: every drone's events move its
		// tracker; an aircraft's only with a circle; every loss ends one.
		proto, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, bus.TrackPrefix+"."), ".")
		if o.trackers.wants(proto) || bytes.Contains(m.Data, alert.LostMarker) {
			put(m)
		}
	}
	for _, s := range []struct {
		subj string
		fn   func(*nats.Msg)
	}{{bus.ThreatPrefix + ".>", put}, {bus.ZonePrefix + ".>", put}, {bus.TrackPrefix + ".>", tracks}} {
		u, err := ev.Subscribe(s.subj, s.fn)
		if err != nil {
			unsubscribe()
			return nil, &alert.Error{Msg: "mqtt: subscribe " + s.subj, Err: err}
		}
		unsubs = append(unsubs, u)
	}
	return unsubscribe, nil
}

// connect makes the first connection, retrying with back-off and
// reporting why it failed (a refused password, an untrusted certificate);
// after it, paho reconnects by itself.
func (o *Output) connect(ctx context.Context, c paho.Client, rep lifecycle.Reporter) {
	b := lifecycle.Backoff{Min: time.Second, Max: 30 * time.Second}
	for {
		t := c.Connect()
		select {
		case <-t.Done():
		case <-ctx.Done():
			return
		}
		if t.Error() == nil {
			return
		}
		rep.Retrying(fmt.Errorf("mqtt: connect: %w", t.Error()))
		if !b.Sleep(ctx) {
			return
		}
	}
}

// loop applies events to the picture and publishes what changed.
func (o *Output) loop(ctx context.Context, c paho.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-o.q.C():
			if ch := o.trackEvent(b); ch != nil {
				o.publishTracker(c, ch)
			}
			zc, changed := o.state.apply(b)
			switch {
			case zc != nil && zc.deleted:
				o.forgetZone(c, zc.ID)
			case zc != nil:
				o.discoverZone(c, zc.Zone)
			}
			for _, p := range changed {
				c.Publish(o.cfg.Prefix+"/"+p.topic, 1, true, p.payload)
			}
		}
	}
}

// sink sends alert messages to <prefix>/alerts/<zone> with QoS 1 and
// waits for the broker's acknowledgement.
type sink struct {
	o *Output
	c paho.Client
}

func (s *sink) Send(ctx context.Context, m *alert.Message, body []byte) error {
	if !s.c.IsConnectionOpen() {
		return errors.New("mqtt: not connected to the broker")
	}
	t := s.c.Publish(s.o.cfg.Prefix+"/alerts/"+topicToken(m.Zone.ID), 1, false, body)
	actx, cancel := alert.AckContext(ctx) // an acknowledgement just after a stall counts
	defer cancel()
	select {
	case <-t.Done():
		return t.Error()
	case <-actx.Done():
		return fmt.Errorf("mqtt: broker did not acknowledge: %w", cmp.Or(ctx.Err(), actx.Err()))
	}
}

// announce publishes "online", the discovery configs and the current
// sensor states (after every (re)connect: retained messages survive, but a
// broker restarted without persistence has lost them).
func (o *Output) announce(c paho.Client) {
	c.Publish(o.cfg.Prefix+"/status", 1, true, "online")
	if o.cfg.DiscoveryPrefix != "off" {
		for _, d := range o.sensorConfigs() {
			c.Publish(d.topic, 1, true, d.payload)
		}
		for _, z := range o.state.zones() {
			o.discoverZone(c, z)
		}
	}
	for _, p := range o.state.all() {
		c.Publish(o.cfg.Prefix+"/"+p.topic, 1, true, p.payload)
	}
	for _, t := range o.trackers.all() {
		o.publishTracker(c, &t)
	}
}

// trackEvent applies a track event to the trackers (nil for other events).
func (o *Output) trackEvent(b []byte) *trackerChange {
	h, err := events.Peek(b)
	if err != nil || (h.Type != events.TypeTrackUpdate && h.Type != events.TypeTrackLost) {
		return nil
	}
	var t events.TrackEvent
	if json.Unmarshal(b, &t) != nil || t.Track.TrackID == "" {
		return nil
	}
	return o.trackers.apply(&t, h.Type == events.TypeTrackLost)
}

type publication struct {
	topic   string
	payload []byte
}

// device is the Home Assistant device every entity belongs to.
func (o *Output) device() map[string]any {
	return map[string]any{"identifiers": []string{"cuasd_" + o.cfg.Node}, "name": "cuasd " + o.cfg.Node,
		"manufacturer": "cuasd", "model": "counter-UAS decision support"}
}

// discovery is an entity's retained discovery config. default_entity_id
// ("<component>.cuasd_<object>") names the entity: Home Assistant
// deprecated object_id for it in 2025.10 (it stops working in 2026.4).
func (o *Output) discovery(component, object string, cfg map[string]any) publication {
	cfg["unique_id"] = "cuasd_" + topicToken(o.cfg.Node) + "_" + object
	cfg["default_entity_id"] = component + "." + entitySlug("cuasd_"+object)
	cfg["availability_topic"] = o.cfg.Prefix + "/status"
	cfg["payload_available"], cfg["payload_not_available"] = "online", "offline"
	cfg["device"] = o.device()
	b, _ := json.Marshal(cfg)
	return publication{fmt.Sprintf("%s/%s/%s/%s/config", o.cfg.DiscoveryPrefix, component, topicToken(o.cfg.Node), object), b}
}

func (o *Output) sensorConfigs() []publication {
	return []publication{
		o.discovery("sensor", "active_threats", map[string]any{"name": "Active threats",
			"state_topic": o.cfg.Prefix + "/threats/active", "state_class": "measurement", "icon": "mdi:quadcopter"}),
		o.discovery("sensor", "max_lambda", map[string]any{"name": "Highest threat score",
			"state_topic": o.cfg.Prefix + "/threats/max_lambda", "state_class": "measurement", "icon": "mdi:alert"}),
	}
}

// forgetZone removes a deleted zone's entity from Home Assistant (an empty
// retained config) and clears its retained state.
func (o *Output) forgetZone(c paho.Client, id string) {
	if o.cfg.DiscoveryPrefix != "off" {
		c.Publish(fmt.Sprintf("%s/binary_sensor/%s/breach_%s/config", o.cfg.DiscoveryPrefix, topicToken(o.cfg.Node), topicToken(id)), 1, true, []byte{})
	}
	c.Publish(o.cfg.Prefix+"/zone/"+topicToken(id)+"/breach", 1, true, []byte{})
}

func (o *Output) discoverZone(c paho.Client, z Zone) {
	if o.cfg.DiscoveryPrefix == "off" {
		return
	}
	name := z.Name
	if name == "" {
		name = z.ID
	}
	d := o.discovery("binary_sensor", "breach_"+topicToken(z.ID), map[string]any{"name": "Drone or unknown object in " + name,
		"state_topic": o.cfg.Prefix + "/zone/" + topicToken(z.ID) + "/breach", "payload_on": "ON", "payload_off": "OFF",
		"device_class": "safety"})
	c.Publish(d.topic, 1, true, d.payload)
}

// entitySlug makes s the object part of a Home Assistant entity id:
// lower-case letters, digits and '_' only.
func entitySlug(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		if r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') {
			return r
		}
		return '_'
	}, s)
}

// topicToken makes s one MQTT topic level and a discovery object id:
// letters, digits, '_' and '-' only.
func topicToken(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
}
