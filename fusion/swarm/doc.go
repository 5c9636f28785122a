// Package swarm finds coordinated groups of tracks: the connected
// components of the proximity graph, where two tracks are linked when they
// are within a link distance (great-circle) and, when asked, within an
// altitude difference and moving coherently.
//
// The graph is never built in full. Tracks are bucketed in a latitude-row
// by longitude-column grid whose cells are one link distance tall, so each
// track is compared only with the tracks of the few cells its link circle
// overlaps, and the components are merged with a union-find (path
// compression and union by rank) as links are found. The cost is near
// linear in the number of tracks for any realistic density.
//
// The package is pure: no I/O, no clock, no goroutines. It must not import
// the track store or NATS; callers pass positions in.
package swarm
