// Package web is cuasd's map: a browser single-page application for a watch
// floor, served by cuasd itself and embedded in the binary with go:embed.
//
// It owns the static files under static/ (HTML, CSS and plain JavaScript
// modules, no build step), the third-party files vendored under
// static/vendor/ by vendor.sh (Leaflet and a Natural Earth 1:110m world
// outline, so the page loads with no internet), and the HTTP handler that
// serves them: index.html at {base}/ and everything else under {base}/ui/.
// The browser test that drives the page in Chromium lives in e2e/.
//
// The page talks to cuasd only through the public HTTP API under the same
// base path (see httpapi/openapi), exactly as any other client would. This
// package must not import the API's implementation packages or read any
// state of the service: it serves files and the two settings in Options.
package web
