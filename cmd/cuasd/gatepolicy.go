package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/cuasd/cuasd/gate"
)

// gatePolicyFlag registers --gate-policy (issue 33): the gate's policy as
// a YAML file, so an operator sets the hysteresis margins and dwell (and
// the thresholds and weights) without a rebuild.
func (c *config) gatePolicyFlag(fs *flag.FlagSet) {
	fs.StringVar(&c.GatePolicy, "gate-policy", c.GatePolicy, "gate policy `FILE` (YAML: alert_at, intercept_at, alert_fall_margin, intercept_fall_margin, min_hold_s, weights, ...; see docs/design/gate.md); default: the built-in policy, GET /v1/lambda shows the one in force")
}

// validateGatePolicy reads --gate-policy into c.policy.
func (c *config) validateGatePolicy() error {
	if c.GatePolicy == "" {
		c.policy = gate.DefaultPolicy()
		return nil
	}
	b, err := os.ReadFile(c.GatePolicy)
	if err != nil {
		return fmt.Errorf("--gate-policy: %w", err)
	}
	p, err := parseGatePolicy(c.GatePolicy, b)
	if err != nil {
		return err
	}
	c.policy = p
	return nil
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// parseGatePolicy reads a policy file strictly: an unknown key or a value
// of the wrong type is an error naming the file and line, and the values
// must pass gate.Policy.Validate. Fields left out keep their defaults.
func parseGatePolicy(name string, data []byte) (gate.Policy, error) {
	var p gate.Policy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		msgs := []string{err.Error()}
		if errors.As(err, &te) {
			msgs = te.Errors
		}
		var errs []error
		for _, m := range msgs {
			if g := yamlLineRE.FindStringSubmatch(m); g != nil {
				errs = append(errs, fmt.Errorf("gate policy %s:%s: %s", name, g[1], g[2]))
				continue
			}
			errs = append(errs, fmt.Errorf("gate policy %s: %s", name, m))
		}
		return p, errors.Join(errs...)
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("gate policy %s: %w", name, err)
	}
	return p, nil // fields left out are zero: the gate reads them as their defaults
}
