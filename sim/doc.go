// Package sim generates realistic synthetic traffic for demos, tests and
// load benchmarks: aircraft broadcasting ADS-B (DF17 frames with correct
// CRC-24 and CPR encoding), drones broadcasting Remote ID message packs,
// MAVLink vehicles, and coordinated swarms, moving along plausible paths.
//
// Every frame sim produces is a real, standard-conformant encoding; the
// package's tests decode them with the production decoders. sim publishes
// through a Sink and knows nothing of NATS or HTTP. It is synthetic data:
// nothing it emits is an observation of the real world.
//
// FalseAlarmSet is a seeded set of scripted scenarios (Scenario, Actor)
// around the demo site — airliners, helicopters, a legal hobby drone,
// intrusions, a swarm, a spoofed track — each actor with what an operator
// should see of it (Expect); internal/falsealarm measures the gate and the
// alert rules against them.
package sim
