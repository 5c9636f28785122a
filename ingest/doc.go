// Package ingest is the one home of cuasd's inputs. An input is a Source:
// Beast and AVR over TCP (listen and connect, modes_net.go), MAVLink over
// UDP and TCP (ingest/mavudp), the traffic simulator (simulator.go); HTTP
// ingest and capture replay publish through the same Sink. Every source
// does one thing: publish raw frames with a sensor identity to the
// cuas.raw.{protocol}.{sensor} subjects named in package bus, through a
// Sink — the Publisher, which answers only once JetStream stored the
// frames — and count what it could not publish. Sources never decode
// beyond the framing needed to split a byte stream into frames, and never
// touch fusion state. `cuasd serve` runs each source as part of its inputs
// component, which reports every source's state in /readyz.
package ingest
