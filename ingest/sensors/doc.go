// Package sensors is the home of cuasd's field-sensor inputs: receivers
// that decode drone broadcasts themselves and hand cuasd JSON — WarDragon
// kits running DragonSync (ZeroMQ, package zmq), ESP32 Remote ID scanners
// (USB serial, package serial) and UDP JSON forwarders (package jsonudp).
// The messages are parsed by package droneclaim.
//
// Every input turns a drone claim into an ASTM F3411 message pack and
// publishes it as a raw frame, on cuas.raw.remoteid.{sensor} (or
// cuas.raw.dji.{sensor} for DJI DroneID), so the decoder workers, fusion,
// the board and the events treat it like a frame cuasd heard itself: a
// drone heard by a kit and in a capture is one track. The Intake here does
// that step for all of them, and the Registry remembers each sensor: its
// kind, its position (configured, or from its status feed), when it was
// last heard, and how many messages it sent and how many were refused.
//
// These claims are doubly unauthenticated: the drone's broadcast can be
// spoofed, and so can the sensor's JSON, which nothing signs.
package sensors
