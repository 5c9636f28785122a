// Package bus owns cuasd's connection to NATS and is the one place where
// every NATS subject (pipeline and events), header, framing, JetStream
// stream, consumer and key-value bucket of the pipeline is named
// (subjects.go), and where the embedded server's users, roles and
// permissions are decided (security.go).
//
// By default it starts an embedded nats-server v2 with JetStream stored
// under the data directory; given a URL it connects to an external NATS
// (cluster) instead. After connecting, both cases follow the same code path.
// bus knows nothing of protocols' contents: it moves bytes and declares
// streams. It must not import the decoders, fusion, the gate or HTTP.
package bus
