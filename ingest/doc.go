// Package ingest is the one home of cuasd's inputs. An input is a Source:
// Beast and AVR over TCP (listen and connect, modes_net.go), MAVLink over
// UDP and TCP (ingest/mavudp), the traffic simulator (simulator.go), a
// capture being replayed (replay.go, `cuasd replay`), the single-frame
// intake (intake.go), the field sensors (ingest/sensors) and HTTP ingest
// (http.go). HTTP ingest (httpapi, POST /v1/ingest/{protocol} and the
// decode routes' publish option) is called once per request and must
// answer that request with what was stored, so it is a Source the other
// way round: its Run connects the Sink it is given to the request handler
// and holds it until the inputs stop; a request while it is not running
// stores nothing and is answered 503. Every source
// does one thing: publish raw frames with a sensor identity to the
// cuas.raw.{protocol}.{sensor} subjects named in package bus, through a
// Sink — the Publisher, which answers only once JetStream stored the
// frames — and count what it could not publish. Sources never decode
// beyond the framing needed to split a byte stream into frames, and never
// touch fusion state. `cuasd serve` runs each source as part of its inputs
// component, which reports every source's state in /readyz.
package ingest
