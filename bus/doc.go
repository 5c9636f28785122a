// Package bus owns cuasd's connection to NATS and is the one place where
// every NATS subject (pipeline and events), header, framing, JetStream
// stream, consumer and key-value bucket of the pipeline is named
// (subjects.go), and where the embedded server's users, roles and
// permissions are decided (security.go).
//
// By default it starts an embedded nats-server v2 with JetStream stored
// under the data directory; given a URL it connects to an external NATS
// (cluster) instead. After connecting, both cases follow the same code path.
// It is also the only JetStream client code outside the ledger's store
// (jetstream.go, jsmsg.go): JetStream wraps key-value buckets, acknowledged
// publishing and consumers in small types, and every other package
// declares the interface it needs and is given a *JetStream
// (internal/codecheck enforces it).
// bus knows nothing of protocols' contents: it moves bytes and declares
// streams. It must not import the decoders, fusion, the gate or HTTP.
package bus
