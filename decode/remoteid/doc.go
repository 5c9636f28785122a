// Package remoteid decodes and encodes ASTM F3411 broadcast Remote ID
// (Open Drone ID): the six 25-byte message kinds, message packs, and the
// carriers that real receivers capture (Bluetooth 4 legacy advertising,
// Bluetooth 5 extended / Long Range advertising, Wi-Fi beacon vendor IEs and
// Wi-Fi NAN service discovery frames).
//
// It owns the wire format and nothing else: pure functions on byte slices,
// no I/O, no goroutines, no globals other than constant tables. It must not
// import HTTP, NATS or pipeline packages, and it does not read capture files
// (package ingest/pcap does, and hands the frames here).
//
// Two layers are kept apart on purpose:
//
//   - The hot path, [Decode], [DecodePack] and the carrier decoders, fills a
//     caller-owned, reusable struct with the raw wire fields and a warning
//     bitset. It allocates nothing on success.
//   - The presentation layer, [NewMessageView] and [NewFrameView], turns a
//     decoded struct into JSON-ready values with units, "*_name" strings and
//     nulls for "unknown" sentinels. It allocates freely.
//
// Protocol versions 0 (F3411-19), 1 (F3411-20, prEN 4709-002 P1) and 2
// (F3411-22a) are decoded; fields that a version lacks decode as absent.
//
// Every decoded value is a claim made by an unauthenticated, spoofable
// broadcast. The plausibility [Warning]s are the decoder's spoofing and
// malfunction indicators; a message that cannot be decoded at all yields an
// [*Error] naming the byte offset and the reason.
package remoteid
