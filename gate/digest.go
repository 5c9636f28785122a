package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Digest is the SHA-256 of g's JSON encoding (encoding/json, fields in
// declaration order), in hex: the content hash by which a decision record
// names the exact version of a zone it was evaluated against.
// fusion/zones keeps every version it stored under this digest, so a
// record stays verifiable after the zone changes or is deleted.
func (g *Geofence) Digest() string {
	b, err := json.Marshal(g)
	if err != nil {
		// A Geofence holds only strings, numbers and slices of them.
		panic("gate: encode geofence: " + err.Error())
	}
	return DigestOf(b)
}

// DigestOf is the hex SHA-256 of a geofence's JSON encoding b.
func DigestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
