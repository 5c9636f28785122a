// Package ledger is the audit trail: DSSE-signed receipts of gate decisions
// in an append-only RFC 6962 Merkle log.
package ledger
