package events

import "embed"

// Schemas holds the JSON Schemas (draft 2020-12) of the events:
// schema/track.json, threat.json, swarm.json and zone.json, with shared
// definitions in schema/defs.json.
//
//go:embed schema/*.json
var Schemas embed.FS
