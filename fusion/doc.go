// Package fusion turns observations into tracks: it owns the track store
// (keyed by identity, merged across protocols), ADS-B CPR pairing, track
// expiry, continuous gate evaluation, swarm detection over live tracks and
// the threat board. Its state is rebuilt from the CUAS_OBS stream on
// restart. It reads observations from NATS subjects named in package bus and
// calls the pure gate package; it never parses raw frames or serves HTTP.
package fusion
