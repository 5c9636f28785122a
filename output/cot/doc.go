// Package cot is cuasd's Cursor-on-Target output: it turns the JSON events
// of package events (track updates and losses, zones) into CoT 2.0 XML and
// streams them to ATAK, WinTAK and iTAK clients over UDP (unicast or the SA
// multicast group) and to a TAK Server over TCP or mutual TLS (issue 18).
//
// Every sink is one output.Output with its own bounded queue, so a slow or
// dead sink drops (and counts) its own events and never slows ingest or
// the other sinks. The encoder (Encoder) is a pure, allocation-free
// function of an event; the transports only move bytes.
//
// The events describe unauthenticated broadcasts: every CoT event carries
// that caveat in its remarks, with the gate's decision, Λ and top axes.
package cot
