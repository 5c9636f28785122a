// Package reference owns cuasd's reference data: the 53-system drone
// database, the sourced research corpus and the protocol sample vectors, all
// embedded as versioned JSON files under data/ and validated when loaded.
//
// The drone database is organised by US DoD UAS Group (JP 3-30; US Army UAS
// Roadmap 2010-2035). Every record carries at least one public source, and
// every figure in its specs names the source that states it; a figure no
// source states is null, never an estimate. Lookup answers the gate's
// classification question ("what could this be, and whose is it?") from the
// identifiers a broadcast claims: the ANSI/CTA-2063-A serial number prefix,
// the ASTM F3411 UA type, the ADS-B emitter category and the MAVLink
// MAV_TYPE. Those identifiers are unauthenticated claims, so a lookup yields
// candidates, not an identification.
//
// This package is pure data and lookups: it performs no I/O beyond reading
// its own embedded files, imports no HTTP, NATS or decoder package, and must
// not be edited to hold run-time state. The HTTP layer (package httpapi)
// serves it; the decoders are checked against its samples only in tests.
package reference
