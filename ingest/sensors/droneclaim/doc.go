// Package droneclaim parses the JSON that field drone sensors emit — the
// WarDragon/DragonSync ZeroMQ feeds (Remote ID on port 4224, DJI DroneID
// from an AntSDR on 4221, the kit's status on 4225), ESP32 Remote ID
// scanners on USB serial and the flat objects UDP forwarders send — into
// one Claim, and re-encodes a Claim as an ASTM F3411 message pack so that
// the Remote ID decoder, fusion, the board and the events see it like any
// other Remote ID frame.
//
// Everything here is a pure function on bytes: no I/O, no goroutines.
//
// The feeds disagree on spelling, and the parser accepts every variant
// found in the public code that produces and consumes them (DragonSync's
// telemetry parser and test fixtures, droneid-go, antsdr_dji_droneid):
// numbers as JSON numbers or as strings, with or without a unit ("17.75
// m/s", "95.0 m", "-71 dBm"); the operator position as latitude/longitude
// or operator_lat/operator_lon (or pilot_lat/pilot_lon); MAC and RSSI in
// the Basic ID, at the top of a list item, or as the ESP32's
// AUX_ADV_IND.rssi and aext.AdvA; ua_type as a number or a name.
//
// A message that is not JSON, has the wrong types, misses its identity or
// carries values out of range (latitude 91, speed "fast") is refused with
// an [*Error] whose Reason is a short, bounded metrics label.
//
// Every value is a claim: the sensor decoded an unauthenticated broadcast,
// and cuasd cannot check either the broadcast or the sensor's decoding.
package droneclaim
