// Package ingest holds the adapters that bring frames into cuasd: HTTP,
// Beast and AVR over TCP (listen and connect), MAVLink over UDP and capture
// replay. Every adapter does one thing: publish raw frames to the
// cuas.raw.{protocol}.{sensor} subjects named in package bus, and count
// what it could not publish. Adapters never decode beyond the framing needed
// to split a byte stream into frames, and never touch fusion state.
package ingest
