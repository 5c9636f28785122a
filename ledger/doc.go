// Package ledger is the audit trail of cuasd: every gate decision and every
// emitted receipt becomes a DSSE-signed in-toto Statement appended to an
// RFC 6962 Merkle log that survives a crash and that a third party can
// verify offline.
//
// # What it owns
//
//   - Envelopes: DSSE (github.com/secure-systems-lab/go-securesystemslib/dsse)
//     with payloadType application/vnd.in-toto+json; the payload is an
//     in-toto Statement v1 whose subject digest is the SHA-256 of the
//     record's compact JSON and whose predicate is the record.
//   - Keys: Ed25519, from a PKCS#8 PEM file or generated into the data
//     directory (mode 0600) at first start; keyid = hex SHA-256 of the
//     PKIX-encoded public key. An --unsigned placeholder mode keeps the
//     interface contract's placeholder behaviour (docs/INTERFACE.md) and says so (SigningMode).
//   - The log: RFC 6962 hashing and proofs via github.com/transparency-dev/merkle;
//     entries stored in the JetStream stream CUAS_LEDGER (CUAS_LEDGER_<instance>
//     for a named instance; file storage, deletes and purges denied), one
//     group-committed batch per message,
//     each batch carrying the signed C2SP tlog-checkpoint
//     (golang.org/x/mod/sumdb/note) of the tree it completes; on Open the
//     tree is rebuilt and checked against every stored checkpoint.
//   - Offline verification of a receipt bundle (VerifyReceipt), used by
//     `cuasd verify`.
//
// # Durability
//
// Append returns only after JetStream has acknowledged the batch holding
// the entry. The JetStream server decides what an acknowledgement means:
// with SyncAlways (server option `jetstream { sync_interval: always }`, or
// server.Options.SyncAlways when embedded) every batch is fsync'ed before
// the ack, so an acknowledged receipt survives a power cut; without it the
// batch is in the OS page cache before the ack, which survives a killed
// process but not a power cut. Group commit makes SyncAlways affordable:
// one sync per batch, not per receipt.
//
// # What it must not touch
//
// It knows nothing of HTTP, the gate or the pipeline: callers hand it a
// subject, a predicate type and a JSON record. It does not create or
// configure the NATS server or connection, only its own stream. Private
// keys never appear in its logs, errors or return values.
package ledger
