// Package eventstest validates events against their JSON Schemas in tests:
// the check every producer and consumer of events can run on what it sends
// or receives.
package eventstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
)

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	compErr  error
)

func compile() {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	names, err := fs.Glob(events.Schemas, "schema/*.json")
	if err != nil {
		compErr = err
		return
	}
	for _, n := range names {
		b, err := fs.ReadFile(events.Schemas, n)
		if err != nil {
			compErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			compErr = fmt.Errorf("%s: %w", n, err)
			return
		}
		if err := c.AddResource("https://cuasd.dev/schema/events/v1/"+strings.TrimPrefix(n, "schema/"), doc); err != nil {
			compErr = err
			return
		}
	}
	compiled = map[string]*jsonschema.Schema{}
	for _, k := range []string{"track", "threat", "swarm", "zone", "sensor"} {
		s, err := c.Compile("https://cuasd.dev/schema/events/v1/" + k + ".json")
		if err != nil {
			compErr = fmt.Errorf("%s: %w", k, err)
			return
		}
		compiled[k] = s
	}
}

// KindOf names the schema of a subject: track, threat, swarm, zone or
// sensor ("" for none).
func KindOf(subject string) string {
	switch {
	case strings.HasPrefix(subject, bus.TrackPrefix+"."):
		return "track"
	case strings.HasPrefix(subject, bus.ThreatPrefix+"."):
		return "threat"
	case subject == bus.SwarmSubject:
		return "swarm"
	case strings.HasPrefix(subject, bus.ZonePrefix+"."):
		return "zone"
	case strings.HasPrefix(subject, bus.SensorPrefix+"."):
		return "sensor" // issue 25
	}
	return ""
}

// Check validates an event published on subject against its schema.
func Check(subject string, data []byte) error {
	once.Do(compile)
	if compErr != nil {
		return compErr
	}
	s := compiled[KindOf(subject)]
	if s == nil {
		return fmt.Errorf("no schema for subject %q", subject)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if err := s.Validate(v); err != nil {
		return err
	}
	var h events.Header
	if err := json.Unmarshal(data, &h); err != nil {
		return err
	}
	_, err = events.Peek(data)
	return err
}

// Validate fails the test when an event does not match its schema.
func Validate(tb testing.TB, subject string, data []byte) {
	tb.Helper()
	if err := Check(subject, data); err != nil {
		tb.Errorf("event on %s does not match its schema: %v\n%s", subject, err, data)
	}
}
