package httpapi

import (
	"context"
	"github.com/cuasd/cuasd/gate"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/output"
)

// Deps is everything the HTTP layer needs from the rest of the program.
// Nil interface fields are allowed: the endpoints that need them answer 503
// (or 501 while unbuilt), so a partial wiring never yields made-up data.
type Deps struct {
	// Logger receives request and error logs. Nil means slog.Default().
	Logger *slog.Logger
	// Version is the service version reported in receipts and build info.
	Version string
	// BasePath is where the API is mounted, e.g. "/api/cuas".
	BasePath string
	// Policy is the gate's policy (--gate-policy): what POST
	// /v1/counter-uas/evaluate scores with and GET /v1/lambda describes.
	// The zero Policy is gate.DefaultPolicy.
	Policy gate.Policy
	// Registry receives the HTTP metrics. Nil means a private registry.
	Registry prometheus.Registerer
	// Gatherer serves /metrics. Nil means /metrics is not routed.
	Gatherer prometheus.Gatherer
	// Ready reports whether the service is ready, degraded or not ready,
	// and the states of its components (GET /readyz).
	Ready func(ctx context.Context) Readiness
	// SigningMode says how receipts are signed ("ed25519" or "unsigned");
	// /v1/honest states it.
	SigningMode string

	Ledger    ReceiptLedger
	Drones    DroneCatalog
	Zones     ZoneStore
	Tracks    TrackReader
	Threats   ThreatBoard
	Publisher RawPublisher
	Live      LiveTracks
	// Sensors is the field sensor registry (nil: no sensor inputs).
	Sensors SensorRegistry
	// Alerts serves GET /v1/alerts (issue 19); nil when not configured.
	Alerts AlertStore
	// History reads the recorded track history (issue 20).
	History HistoryReader
	// Readsb serves {base}/data/*.json (readsb's documents); nil answers 501.
	Readsb ReadsbDocuments
	// MAVLinkKey is the 32-byte signing key configured with --mavlink-key
	// (nil when none), used to verify signed frames.
	MAVLinkKey []byte
	// Outputs reports every output sink (GET /v1/outputs); nil answers 503.
	Outputs func() []output.SinkStatus
	// Web serves the single-page application at the base path; nil means
	// the map is not built into this binary.
	Web http.Handler
	// Storage, when not nil, says why writes cannot be kept now (a store
	// below its free-space low mark, issue 32): the routes that store
	// something (ingest, geofences, the allow list, receipts, evaluations)
	// then answer 503 with Retry-After instead of accepting what they
	// could not keep.
	Storage func() error

	// Auth checks bearer tokens; nil leaves the API open (loopback only:
	// cuasd refuses to start open on another address).
	Auth *Authenticator
	// RateLimit is the per-client request rate (requests per second, burst
	// of the same size); 0 means unlimited.
	RateLimit float64
	// MetricsToken, when set, is required (as a bearer token) by /metrics.
	MetricsToken string
}

// NewServer returns the complete HTTP handler of cuasd: the API under
// d.BasePath, the compatibility aliases, /openapi.json and /metrics at the
// host root.
func NewServer(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.BasePath == "" {
		d.BasePath = "/api/cuas"
	}
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	return routes(d)
}
