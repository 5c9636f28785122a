// Package httpapi is cuasd's HTTP/JSON interface: routing (go-chi/chi v5),
// the RFC 9457 error model, the embedded OpenAPI 3.1 document, request
// metrics and the handlers of every endpoint of the interface contract (docs/INTERFACE.md).
//
// Handlers read and change state only through the small interfaces in Deps
// (ledger, tracks, zones, drone catalog, publisher); they never touch NATS,
// files or decoder internals beyond the decoders' pure functions. The
// package owns no goroutines that outlive a request.
package httpapi
