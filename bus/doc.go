// Package bus owns cuasd's connection to NATS and is the one place where
// every NATS subject, JetStream stream, consumer and key-value bucket of the
// pipeline is named.
//
// By default it starts an embedded nats-server v2 with JetStream stored
// under the data directory; given a URL it connects to an external NATS
// (cluster) instead. After connecting, both cases follow the same code path.
// bus knows nothing of protocols' contents: it moves bytes and declares
// streams. It must not import the decoders, fusion, the gate or HTTP.
package bus
