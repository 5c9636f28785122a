// Package mavudp brings MAVLink into cuasd over the network: a UDP listener
// (--mavlink-udp, e.g. 127.0.0.1:14550, the port autopilots and ground
// stations send telemetry to) and a TCP client (--mavlink-tcp, for SITL and
// telemetry radios that serve MAVLink on a TCP port).
//
// It owns only the framing: each peer (UDP source address, or TCP
// connection) gets its own mavlink.Stream, so a frame split across
// datagrams or reads is reassembled and garbage from one peer never costs
// another its frames. Every frame whose checksum verifies (or whose id the
// dialect lacks) is published, as its own raw message, through the
// Publisher interface to the pipeline's cuas.raw.mavlink.{sensor} subject;
// the pipeline's decoder workers decode and verify signatures. This package
// must not decode fields, touch fusion state or know about NATS beyond the
// Publisher interface (which *ingest.Publisher implements).
package mavudp
