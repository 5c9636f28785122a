package alert

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/secretfile"
)

// Config is a parsed rule file: where alerts go (Sinks) and when they are
// raised (Rules).
type Config struct {
	Sinks []SinkConfig `yaml:"sinks"`
	Rules []Rule       `yaml:"rules"`
}

// SinkConfig is one destination of alerts: a webhook or the MQTT broker.
type SinkConfig struct {
	Name string `yaml:"name"`
	// Webhook is the http(s) URL alerts are POSTed to.
	Webhook string `yaml:"webhook"`
	// SecretFile holds the HMAC-SHA256 key of the X-Cuas-Signature header.
	// The key itself is never logged, echoed or put in an error.
	SecretFile string `yaml:"secret_file"`
	// Format is "cuas" (the alert JSON, the default) or "slack"
	// ({"text": ...}, also understood by Mattermost and Rocket.Chat).
	Format string `yaml:"format"`
	// CAFile is a PEM bundle of CAs trusted for an https webhook (default:
	// the system roots).
	CAFile string `yaml:"ca_file"`
	// MQTT sends the sink's alerts to the --mqtt-url broker.
	MQTT bool `yaml:"mqtt"`
	// Timeout bounds one delivery attempt (default 10s).
	Timeout string `yaml:"timeout"`
	// GiveUp is how long an alert message is retried before it is marked
	// failed (default 6h).
	GiveUp string `yaml:"give_up"`

	// Secret is the key read from SecretFile (nil without one).
	Secret []byte `yaml:"-"`
	// secretLine is the line of SecretFile in the file.
	secretLine int
	// TimeoutD and GiveUpD are Timeout and GiveUp parsed.
	TimeoutD, GiveUpD time.Duration `yaml:"-"`
}

// Rule says which threat decisions open an alert and where it goes.
type Rule struct {
	Name string `yaml:"name"`
	// Zones are geofence ids; empty means every zone.
	Zones []string `yaml:"zones"`
	// MinDecision is monitor, alert (the default) or intercept-recommended.
	MinDecision string `yaml:"min_decision"`
	// MinLambda is the smallest Λ that matches (default 0).
	MinLambda float64 `yaml:"min_lambda"`
	// Protocols, when given, match a track seen on at least one of them.
	Protocols []string `yaml:"protocols"`
	// SwarmMin, when above 0, matches only members of a swarm of at least
	// that many tracks.
	SwarmMin int `yaml:"swarm_min"`
	// Breach, when true, matches only while the track is inside the zone.
	Breach bool `yaml:"breach"`
	// Classes, when given, match only tracks of these classes: aircraft,
	// drone, unknown (gate.TrackClass; issue 33). Empty means every class.
	Classes []string `yaml:"classes"`
	// Verification, when given, matches only a track whose last ADS-B
	// position claim checked by multilateration had one of these
	// statuses (verified, contradicted, unverifiable; issue 31).
	Verification []string `yaml:"verification"`
	// Cooldown: within it a track and rule never open a second alert
	// (default 60s), unless a breach starts: every breach pages.
	Cooldown string   `yaml:"cooldown"`
	Sinks    []string `yaml:"sinks"`

	// Min and CooldownD are MinDecision and Cooldown parsed.
	Min       gate.Decision `yaml:"-"`
	CooldownD time.Duration `yaml:"-"`

	// zoneLines are the lines of Zones in the file, for CheckZones.
	zoneLines []int
}

// Defaults of a sink and a rule.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultGiveUp   = 6 * time.Hour
	DefaultCooldown = 60 * time.Second
	// MaxSecretFile bounds what is read from a secret file.
	MaxSecretFile = 4096
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Parse reads a rule file's bytes. name is the file's name for messages.
// It checks everything that does not need the outside world: keys, names,
// references between rules and sinks, durations and URLs. Zones and secret
// files are checked by Resolve. Parse is a pure function of its input.
func Parse(name string, data []byte) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "empty rule file"}
		}
		return nil, yamlError(name, err)
	}
	return ParseNode(name, &root)
}

// ParseNode is Parse on an already decoded YAML node (the alerts: key of
// the main configuration).
func ParseNode(name string, root *yaml.Node) (*Config, error) {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: doc.Line, Msg: "a rule file is a mapping with sinks: and rules:"}
	}
	v := validator{file: name, root: doc}
	v.unknownKeys(doc, reflect.TypeFor[Config](), nil)
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	var c Config
	if err := doc.Decode(&c); err != nil {
		return nil, yamlError(name, err)
	}
	v.sinks(&c)
	v.rules(&c)
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	return &c, nil
}

// unknownKeys reports every mapping key under n that t (a struct, or a
// slice of structs) does not have, with its line: yaml.Node.Decode has no
// strict mode, and a misspelt key silently ignored would be a rule that
// never fires.
func (v *validator) unknownKeys(n *yaml.Node, t reflect.Type, path []any) {
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				v.unknownKeys(c, t.Elem(), append(slices.Clip(path), i))
			}
			return
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			fields[tag] = f.Type
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ft, ok := fields[k.Value]
		if !ok {
			v.errs = append(v.errs, &Error{File: v.file, Line: k.Line, Key: pathString(append(slices.Clip(path), k.Value)),
				Msg: fmt.Sprintf("unknown key %q (known: %s)", k.Value, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))})
			continue
		}
		v.unknownKeys(n.Content[i+1], ft, append(slices.Clip(path), k.Value))
	}
}

var lineRE = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError turns a yaml error into one Error per problem, with its line.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := lineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &Error{File: file, Line: n, Msg: m[2]}
		}
		return &Error{File: file, Msg: msg}
	}
	var errs []error
	for _, e := range te.Errors {
		if m := lineRE.FindStringSubmatch(e); m != nil {
			n, _ := strconv.Atoi(m[1])
			errs = append(errs, &Error{File: file, Line: n, Key: unknownKey(m[2]), Msg: m[2]})
			continue
		}
		errs = append(errs, &Error{File: file, Msg: e})
	}
	return errors.Join(errs...)
}

var fieldRE = regexp.MustCompile(`^field (\S+) not found`)

func unknownKey(msg string) string {
	if m := fieldRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// validator collects the problems of a parsed file with their lines.
type validator struct {
	file string
	root *yaml.Node
	errs []error
}

func (v *validator) fail(path []any, format string, args ...any) {
	n := lookup(v.root, path)
	line := 0
	if n != nil {
		line = n.Line
	}
	v.errs = append(v.errs, &Error{File: v.file, Line: line, Key: pathString(path), Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) sinks(c *Config) {
	seen := map[string]bool{}
	for i := range c.Sinks {
		s := &c.Sinks[i]
		p := []any{"sinks", i}
		if !nameRE.MatchString(s.Name) {
			v.fail(append(p, "name"), "a sink needs a name of 1-64 letters, digits, '_' or '-'")
		} else if seen[s.Name] {
			v.fail(append(p, "name"), "sink %q is defined twice", s.Name)
		}
		seen[s.Name] = true
		v.sinkTarget(s, p)
		s.secretLine = v.line(append(p, "secret_file"))
		s.TimeoutD = v.duration(s.Timeout, DefaultTimeout, append(p, "timeout"))
		s.GiveUpD = v.duration(s.GiveUp, DefaultGiveUp, append(p, "give_up"))
	}
}

func (v *validator) sinkTarget(s *SinkConfig, p []any) {
	switch {
	case s.Webhook != "" && s.MQTT:
		v.fail(p, "a sink is either a webhook or mqtt, not both")
	case s.Webhook == "" && !s.MQTT:
		v.fail(p, "a sink needs webhook: URL or mqtt: true")
	case s.Webhook != "":
		u, err := url.Parse(s.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.fail(append(p, "webhook"), "webhook must be an http:// or https:// URL")
		} else if u.User != nil {
			v.fail(append(p, "webhook"), "webhook must not carry credentials in the URL; use secret_file")
		}
	}
	v.sinkFormat(s, p)
}

// sinkFormat checks the webhook-only options.
func (v *validator) sinkFormat(s *SinkConfig, p []any) {
	if s.MQTT && (s.SecretFile != "" || s.CAFile != "" || s.Format != "") {
		v.fail(p, "secret_file, ca_file and format are webhook options")
	}
	switch s.Format {
	case "", "cuas":
		if s.Webhook != "" {
			s.Format = "cuas"
		}
	case "slack":
	default:
		v.fail(append(p, "format"), "format must be cuas or slack, got %q", s.Format)
	}
}

func (v *validator) duration(s string, def time.Duration, p []any) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		v.fail(p, "%q is not a positive duration (e.g. 60s, 5m, 6h)", s)
		return def
	}
	return d
}

func (v *validator) rules(c *Config) {
	sinks := map[string]bool{}
	for _, s := range c.Sinks {
		sinks[s.Name] = true
	}
	seen := map[string]bool{}
	for i := range c.Rules {
		r := &c.Rules[i]
		p := []any{"rules", i}
		if !nameRE.MatchString(r.Name) {
			v.fail(append(p, "name"), "a rule needs a name of 1-64 letters, digits, '_' or '-'")
		} else if seen[r.Name] {
			v.fail(append(p, "name"), "rule %q is defined twice", r.Name)
		}
		seen[r.Name] = true
		v.ruleFields(r, p, sinks)
	}
	if len(c.Rules) == 0 {
		v.fail([]any{"rules"}, "no rules: nothing would ever alert")
	}
}

// verification checks a rule's verification statuses (issue 31).
func (v *validator) verification(r *Rule, p []any) {
	for j, s := range r.Verification {
		if s != "verified" && s != "contradicted" && s != "unverifiable" {
			v.fail(append(p, "verification", j), "verification must be verified, contradicted or unverifiable, got %q", s)
		}
	}
}

func (v *validator) ruleFields(r *Rule, p []any, sinks map[string]bool) {
	r.Min = gate.Alert
	if r.MinDecision != "" {
		var ok bool
		if r.Min, ok = ParseDecision(r.MinDecision); !ok {
			v.fail(append(p, "min_decision"), "min_decision must be monitor, alert or intercept-recommended, got %q", r.MinDecision)
		}
	}
	if r.MinLambda < 0 || r.MinLambda > 1 || r.MinLambda != r.MinLambda {
		v.fail(append(p, "min_lambda"), "min_lambda must be within 0..1")
	}
	if r.SwarmMin < 0 {
		v.fail(append(p, "swarm_min"), "swarm_min must not be negative")
	}
	v.verification(r, p)
	r.CooldownD = v.duration(r.Cooldown, DefaultCooldown, append(p, "cooldown"))
	if len(r.Sinks) == 0 {
		v.fail(p, "rule %q has no sinks", r.Name)
	}
	for j, s := range r.Sinks {
		if !sinks[s] {
			v.fail(append(p, "sinks", j), "unknown sink %q", s)
		}
	}
	v.ruleLists(r, p)
}

// ruleLists checks a rule's zones, classes and protocols, and keeps the
// zones' lines for CheckZones.
func (v *validator) ruleLists(r *Rule, p []any) {
	r.zoneLines = make([]int, len(r.Zones))
	for j, z := range r.Zones {
		r.zoneLines[j] = v.line(append(p, "zones", j))
		if z == "" {
			v.fail(append(p, "zones", j), "empty zone id")
		}
	}
	// An unknown or miscased protocol ("remoteID") matched nothing, so the
	// rule never fired (issue 32): refused, naming the known ones.
	for j, proto := range r.Protocols {
		if !decode.Protocol(proto).Valid() {
			v.fail(append(p, "protocols", j), "unknown protocol %q: want one of %s (lower case)", proto, strings.Join(decode.ProtocolNames(), ", "))
		}
	}
	for j, c := range r.Classes {
		if _, ok := gate.ParseTrackClass(c); !ok {
			v.fail(append(p, "classes", j), "unknown class %q (known: aircraft, drone, unknown)", c)
		}
	}
}

// line is the line of the node at path, or 0.
func (v *validator) line(path []any) int {
	if n := lookup(v.root, path); n != nil {
		return n.Line
	}
	return 0
}

// Resolve checks what Parse cannot: that every zone of a rule exists
// (zones lists the known geofence ids; nil skips the check) and that the
// secret files can be read (readFile nil is os.ReadFile). It fills
// SinkConfig.Secret.
func (c *Config) Resolve(file string, zones []string, readFile func(string) ([]byte, error)) error {
	return errors.Join(c.CheckZones(file, zones), c.readSecrets(file, readFile))
}

// CheckZones says which zones of the rules are not among zones.
func (c *Config) CheckZones(file string, zones []string) error {
	if zones == nil {
		return nil
	}
	var errs []error
	for i := range c.Rules {
		r := &c.Rules[i]
		for j, z := range r.Zones {
			if !slices.Contains(zones, z) {
				line := 0
				if j < len(r.zoneLines) {
					line = r.zoneLines[j]
				}
				errs = append(errs, &Error{File: file, Line: line, Key: fmt.Sprintf("rules[%d].zones", i), Msg: fmt.Sprintf("unknown zone %q (known: %s)", z, strings.Join(zones, ", "))})
			}
		}
	}
	return errors.Join(errs...)
}

func (c *Config) readSecrets(file string, readFile func(string) ([]byte, error)) error {
	if readFile == nil {
		// A regular file of at most MaxSecretFile bytes, never a device or
		// FIFO (secret_file: /dev/zero was read for 1.8 GB, issue 32).
		readFile = func(p string) ([]byte, error) { return secretfile.Read(p, MaxSecretFile) }
	}
	var errs []error
	for i := range c.Sinks {
		s := &c.Sinks[i]
		if s.SecretFile == "" {
			continue
		}
		b, err := readFile(s.SecretFile)
		key := fmt.Sprintf("sinks[%d].secret_file", i)
		switch {
		case err != nil:
			// The path is not secret; the error names it, never its content.
			errs = append(errs, &Error{File: file, Line: s.secretLine, Key: key, Msg: "cannot read the secret file: " + err.Error()})
		case len(bytes.TrimSpace(b)) == 0 || len(b) > MaxSecretFile:
			errs = append(errs, &Error{File: file, Line: s.secretLine, Key: key, Msg: fmt.Sprintf("secret file %s must hold 1..%d bytes", s.SecretFile, MaxSecretFile)})
		default:
			s.Secret = bytes.TrimSpace(b)
		}
	}
	return errors.Join(errs...)
}

// Load reads, parses and resolves a rule file.
func Load(file string, zones []string) (*Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	c, err := Parse(file, b)
	if err != nil {
		return nil, err
	}
	return c, c.Resolve(file, zones, nil)
}

// Sink returns the sink named name.
func (c *Config) Sink(name string) (SinkConfig, bool) {
	for _, s := range c.Sinks {
		if s.Name == name {
			return s, true
		}
	}
	return SinkConfig{}, false
}

// lookup finds the node at path (string keys and int indexes) under n.
func lookup(n *yaml.Node, path []any) *yaml.Node {
	for _, p := range path {
		if n == nil {
			return nil
		}
		switch k := p.(type) {
		case string:
			n = mapValue(n, k)
		case int:
			if n.Kind != yaml.SequenceNode || k >= len(n.Content) {
				return n
			}
			n = n.Content[k]
		}
	}
	return n
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return n
}

func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		}
	}
	return b.String()
}

// ParseDecision reads a decision's name (gate.Decision.String).
func ParseDecision(s string) (gate.Decision, bool) {
	for _, d := range []gate.Decision{gate.Monitor, gate.Alert, gate.InterceptRecommended} {
		if d.String() == s {
			return d, true
		}
	}
	return gate.Monitor, false
}
