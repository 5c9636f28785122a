// Package worker is the decoder stage of the pipeline: it turns raw frames
// into observations.
//
// A Feed is what every cuasd instance runs: an ordered consumer of its own
// on CUAS_RAW that decodes each raw message in place with the protocol's
// FrameDecoder and hands the observations straight to the track store, so
// that a frame costs one durable write (CUAS_RAW), not two. Every instance
// sees every frame; decoding is deterministic, so each derives the same
// tracks, and on start a Feed replays the last track TTL of the stream.
// Undecodable frames become dead letters on cuas.dead.{protocol}, with ids
// derived from the raw message so that every instance's copy is stored
// once.
//
// A Worker (with --publish-observations) is a durable pull consumer of
// CUAS_RAW, one per protocol and shared by every instance (queue
// semantics), that publishes the observations on cuas.obs.{protocol}.p{NN}
// for consumers outside cuasd; a raw message is acknowledged only after
// everything it produced has been acknowledged by JetStream.
//
// The protocol-specific part is a FrameDecoder wrapping the pure decoders
// of package decode (adsb, remoteid, mavlink). Neither holds fusion state
// or serves HTTP.
package worker
