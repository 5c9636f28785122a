// Package pipeline runs the decoder workers: durable JetStream pull
// consumers of CUAS_RAW, one per protocol and shared by every cuasd
// instance (queue semantics), that turn raw frames into observations on
// cuas.obs.{protocol}.{key} and undecodable frames into dead letters on
// cuas.dead.{protocol}. A raw message is acknowledged only after everything
// it produced has been acknowledged by JetStream.
//
// The protocol-specific part is a FrameDecoder wrapping the pure decoders
// of package decode; pipeline must not hold fusion state or serve HTTP.
package pipeline
