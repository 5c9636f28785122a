// Package worker is the decoder stage of the pipeline: it turns raw frames
// into observations. A Worker is a durable JetStream pull consumer of
// CUAS_RAW, one per protocol and shared by every cuasd instance (queue
// semantics), that decodes each raw message with the protocol's
// FrameDecoder and publishes the observations on cuas.obs.{protocol}.p{NN}
// and undecodable frames as dead letters on cuas.dead.{protocol}. A raw
// message is acknowledged only after everything it produced has been
// acknowledged by JetStream.
//
// The protocol-specific part is a FrameDecoder wrapping the pure decoders
// of package decode (adsb, remoteid, mavlink). A worker never holds fusion
// state or serves HTTP.
package worker
