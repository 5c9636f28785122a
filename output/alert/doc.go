// Package alert turns the gate's threat decisions into alerts that reach
// people, and delivers them at least once through crashes.
//
// Rules (a YAML file, see Parse) say which decisions open an alert — a
// zone, a minimum decision and Λ, protocols, a swarm size — and to which
// sinks it goes. The Engine is the alert lifecycle as a pure state machine:
// a match opens an alert with a stable id, a rising decision updates it,
// and leaving the zone, falling below the rule or losing the track
// resolves it; within the rule's cooldown a track and rule never open a
// second alert.
//
// Durability: every state of an alert is published once per sink to
// JetStream (stream CUAS_ALERTS, subject cuas.alert.{sink}.{zone}, de-
// duplicated by Nats-Msg-Id) and each sink reads its own durable consumer.
// A message is acknowledged only once the sink has it, so an alert pending
// when cuasd dies is delivered after the restart; several cuasd instances
// on one NATS share the consumer, so each message is delivered by one of
// them. Deliver runs that consumer for any Sink (the webhook and MQTT
// outputs), retrying with exponential back-off and jitter until the sink's
// give-up age, and keeps each alert's delivery status in the KV bucket
// CUAS_ALERTS for GET /v1/alerts.
//
// An alert is decision support: human_decision_required is always true.
package alert
