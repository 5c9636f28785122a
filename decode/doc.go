// Package decode holds what every protocol decoder shares: the normalised
// Observation that decoder workers publish and fusion consumes.
//
// The protocol decoders live in the sub-packages adsb, remoteid and mavlink.
// They are pure functions on byte slices: no I/O, no goroutines, no globals
// other than constant tables. This package and its children must not import
// NATS, HTTP or any pipeline package; the pipeline imports them.
//
// Every decoded field is a claim made by an unauthenticated, spoofable
// broadcast, never ground truth. Observation carries that framing on: it is
// what a transmitter said about itself, plus what the receiver measured.
package decode
