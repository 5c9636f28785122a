// Package mlat locates Mode S transmitters from the times their
// transmissions reached several sensors (multilateration, MLAT) and checks
// the positions ADS-B transmitters claim against those times.
//
// The pieces, each usable alone:
//
//   - WGS-84 geometry: geodetic ↔ Earth-centred Earth-fixed (ECEF)
//     coordinates, local east/north/up axes (geo.go).
//   - Solver: a weighted Gauss–Newton / Levenberg–Marquardt least-squares
//     fit of position and emission time to the times of arrival, with the
//     transmitted barometric altitude as a pseudo-measurement, an error
//     estimate from the covariance, a geometry (GDOP) check and rejection
//     of one outlying reception (solve.go).
//   - Filter: a constant-velocity Kalman filter per aircraft over
//     successive fixes, gating fixes that disagree with the track
//     (filter.go).
//   - Sync: pairwise clock synchronisation of free-running sensors (12 MHz
//     counters) from transmissions whose origin is known, the mlat-server
//     approach: offset and drift per sensor pair, outlier rejection, a
//     pair used only while its fit is good (sync.go).
//   - Latency: each ADS-B aircraft's position latency measured from its
//     receptions on the synced clocks, so the sync learns from positions
//     advanced to the moment of transmission (latency.go).
//   - Grouper: gathers receptions of the same transmission (same bytes)
//     from different sensors (group.go).
//   - Verify: compares the time differences a claimed position predicts
//     with the measured ones (verify.go).
//
// The package is pure: no I/O, no goroutines, no wall clock; callers pass
// times in. Solving, syncing, grouping and verifying allocate nothing in
// steady state. It lives under fusion because its output is a position
// fused into a track, but it imports nothing of the track store, so the
// store, the pipeline stage that feeds it and the tests each drive it
// directly.
//
// Times are int64 nanoseconds on each sensor's own clock. A GPS-timed
// sensor's clock is the common time base (ClockGPS); a free-running
// counter's is not (Clock12MHz) and must be mapped through Sync before its
// times can be compared with another sensor's.
package mlat
