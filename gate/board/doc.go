// Package board is the continuous gate: the pipeline stage that, on a
// fixed cadence, evaluates every live track of the fusion store against
// every geofence (package gate: the 13 Λ axes, bands and caps), groups
// positioned tracks into swarms, keeps the sorted threat board that the HTTP
// API serves, records a DSSE receipt in the ledger whenever a track's
// decision changes or a breach starts or ends, and publishes the events
// outputs consume (package events).
//
// It reads the store and the zones; it never parses frames or serves HTTP.
// With several cuasd instances every instance keeps the whole board, but
// records receipts and publishes events only for the track partitions it
// owns (fusion.Owners), so each decision is recorded and announced once.
package board
