// Package events defines what cuasd tells the world about its air picture,
// as JSON: the events it publishes on NATS for outputs and operators, and
// the Track and Threat objects that the HTTP API serves (the same types, so
// an event and an API answer never disagree on a field).
//
// Subjects (named in package bus):
//
//	cuas.track.{protocol}.{key}    TrackEvent: a track's state when it changes (at
//	                               most about once a second), a keep-alive every
//	                               KeepAlive while unchanged, and "track.lost" once
//	cuas.threat.{protocol}.{key}   ThreatEvent: a gate decision that was recorded
//	                               (changed, breach started or ended), with Λ, the
//	                               zone and the receipt index
//	cuas.swarm                     SwarmEvent: a swarm formed, changed or dissolved
//	cuas.zone.{id}                 ZoneEvent: a geofence added, changed or deleted,
//	                               and every zone again every ZoneRepeat
//
// Every event carries "v" (the schema version, Version) and "type". A
// consumer must ignore fields it does not know: fields are added within a
// version, never removed or changed in meaning. The JSON Schemas are in
// schema/ and documented in docs/EVENTS.md.
//
// These are claims: positions and identities come from unauthenticated
// broadcasts, and a decision is decision support for a human, never an
// instruction (human_decision_required is always true).
package events
