package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"
)

// The in-toto and DSSE identifiers of a receipt.
const (
	// PayloadType is the DSSE payloadType of every signed receipt: an
	// in-toto Statement, which is what `cosign verify-blob-attestation`
	// and other in-toto tooling expect.
	PayloadType = "application/vnd.in-toto+json"
	// StatementType is the in-toto Statement v1 `_type`.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateTypeReceipt is the default predicateType of records posted
	// to POST /v1/receipt/emit without a payload_type.
	PredicateTypeReceipt = "https://github.com/cuasd/cuasd/attestation/receipt/v1"
	// PredicateTypeGateDecision is the predicateType of gate decisions
	// (evaluate and continuous evaluation).
	PredicateTypeGateDecision = "https://github.com/cuasd/cuasd/attestation/gate-decision/v1"
)

// Limits on what Append accepts.
const (
	// MaxRecordBytes bounds a record (the predicate) in its compact JSON
	// form: 64 KiB, the limit of POST /v1/receipt/emit's payload.
	MaxRecordBytes = 64 << 10
	// MaxNameBytes bounds the subject name and the predicateType.
	MaxNameBytes = 1024
)

// Statement is an in-toto Statement v1, the DSSE payload of a receipt.
// Verifiers decode it; the ledger writes it with appendStatement so that
// Predicate keeps the exact bytes its subject digest covers.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject is one in-toto subject: a name and its digests.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// appendStatement appends the in-toto Statement v1 of record to dst. The
// record must be a JSON object; it is compacted (insignificant whitespace
// removed, nothing else changed) and the subject's sha256 digest is the
// SHA-256 of exactly those compact bytes, which are also the bytes of
// `predicate` in the statement, so a verifier can recompute it from the
// payload alone.
func appendStatement(dst []byte, subject, predicateType string, record []byte) ([]byte, error) {
	const op = "append"
	switch {
	case subject == "":
		return dst, errf(KindInvalid, op, "subject is empty", nil)
	case len(subject) > MaxNameBytes:
		return dst, errf(KindInvalid, op, "subject is longer than 1024 bytes", nil)
	case !utf8.ValidString(subject):
		return dst, errf(KindInvalid, op, "subject is not valid UTF-8", nil)
	case predicateType == "":
		return dst, errf(KindInvalid, op, "predicate type is empty", nil)
	case len(predicateType) > MaxNameBytes:
		return dst, errf(KindInvalid, op, "predicate type is longer than 1024 bytes", nil)
	case !utf8.ValidString(predicateType):
		return dst, errf(KindInvalid, op, "predicate type is not valid UTF-8", nil)
	}
	var compact bytes.Buffer
	compact.Grow(len(record))
	if err := json.Compact(&compact, record); err != nil {
		return dst, errf(KindInvalid, op, "record is not valid JSON", err)
	}
	rec := compact.Bytes()
	if len(rec) == 0 || rec[0] != '{' {
		return dst, errf(KindInvalid, op, "record must be a JSON object", nil)
	}
	if len(rec) > MaxRecordBytes {
		return dst, errf(KindTooLarge, op, "record is larger than 64 KiB", nil)
	}
	if !utf8.Valid(rec) {
		return dst, errf(KindInvalid, op, "record is not valid UTF-8", nil)
	}
	sum := sha256.Sum256(rec)
	subj, _ := json.Marshal(subject)
	pt, _ := json.Marshal(predicateType)
	dst = append(dst, `{"_type":"`+StatementType+`","subject":[{"name":`...)
	dst = append(dst, subj...)
	dst = append(dst, `,"digest":{"sha256":"`...)
	dst = hex.AppendEncode(dst, sum[:])
	dst = append(dst, `"}}],"predicateType":`...)
	dst = append(dst, pt...)
	dst = append(dst, `,"predicate":`...)
	dst = append(dst, rec...)
	dst = append(dst, '}')
	return dst, nil
}
