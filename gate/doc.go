// Package gate is cuasd's counter-UAS rule engine, as pure functions: the
// great-circle geometry (haversine distance, bearing, distance to a circle's
// boundary or a polygon's edge, altitude bands), the geofence and allow-list
// types with their validation, the 13 axes of the Λ score, the decision
// bands and the governance caps, and the definitions served by GET
// /v1/lambda.
//
// Λ is a decision aid and a conjecture, not a proof of safety. Every Result
// says HumanDecisionRequired: the gate supports a human decision and never
// orders an engagement.
//
// The package owns no state and does no I/O: no files, no network, no
// clock, no logging, no globals other than constant tables. Evaluate is a
// deterministic function of its arguments and allocates nothing, so the
// fusion pipeline may call it on every track update. The package must not
// import the drone database, the decoders, the ledger or NATS: callers
// translate those into an Input (for example the classification Side).
package gate
