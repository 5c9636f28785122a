// Package zones keeps the geofences and the allow-list in a JetStream
// key-value bucket, so that every cuasd instance sees the same protected
// zones: a watch applies every change, made by this instance or another,
// to an in-memory snapshot that the pipeline reads without locks.
//
// Keys are "geofence.<id>" (a gate.Geofence as JSON) and "allowlist" (a
// gate.AllowList as JSON). The configured zones seed the bucket when their
// keys are absent; edits through the API therefore survive restarts.
//
// The package owns the bucket's contents and the watch goroutine. It
// validates with package gate but computes nothing itself; it must not
// serve HTTP or touch the other streams.
package zones
