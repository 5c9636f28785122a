// Package fusion turns observations into tracks. It owns the track store
// (tracks keyed by identity and merged across protocols when an identity
// links them), ADS-B CPR pairing, position plausibility, track expiry, the
// consumer that feeds the store from NATS, and the partition ownership
// (Owners) that decides which instance records and announces which tracks.
//
// Every cuasd instance holds the whole picture, rebuilt from the stream on
// restart. The continuous gate that evaluates the tracks is the next stage,
// package gate/board. Fusion never parses raw frames or serves HTTP.
package fusion
