// Package ingest is the one home of cuasd's inputs. An input is a Source:
// Beast and AVR over TCP (listen and connect, modes_net.go), MAVLink over
// UDP and TCP (ingest/mavudp), the traffic simulator (simulator.go), a
// capture being replayed (replay.go, `cuasd replay`), the single-frame
// intake (intake.go) and the field sensors (ingest/sensors). HTTP ingest
// (httpapi, POST /v1/ingest/{protocol}) is deliberately not a Source: it
// is a request/response handler that the HTTP server calls once per
// request and that must answer that request with what the Sink stored
// (202, or 429/503 with Retry-After); a Source owns a long-running loop
// that reads its input and has no caller to answer. It uses the same Sink
// (the Publisher, through httpapi.Deps) and so the same subjects, ids and
// counters. Every source
// does one thing: publish raw frames with a sensor identity to the
// cuas.raw.{protocol}.{sensor} subjects named in package bus, through a
// Sink — the Publisher, which answers only once JetStream stored the
// frames — and count what it could not publish. Sources never decode
// beyond the framing needed to split a byte stream into frames, and never
// touch fusion state. `cuasd serve` runs each source as part of its inputs
// component, which reports every source's state in /readyz.
package ingest
