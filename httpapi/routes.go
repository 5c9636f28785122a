package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes is the one place where every path of the service is declared:
// here, in baseRoutes, v1Routes and hostRoutes below.
func routes(d Deps) http.Handler {
	r := chi.NewRouter()
	// HEAD is served for every GET route (RFC 9110 §9.3.2, issue 32): the
	// GET handler runs and net/http discards the body.
	r.Use(requestID, instrument(requestHistogram(d.Registry), d.Logger), recoverer(d.Logger), headerLimit, middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		writeProblem(w, req, http.StatusNotFound, "no resource at "+req.URL.Path+"; see "+d.BasePath+"/openapi.json")
	})
	r.MethodNotAllowed(methodNotAllowed(r))
	r.Route(d.BasePath, func(r chi.Router) { baseRoutes(r, d) })
	hostRoutes(r, d)
	return r
}

// requestHistogram is the request-duration histogram, registered once per
// registry.
func requestHistogram(reg prometheus.Registerer) *prometheus.HistogramVec {
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_request_duration_seconds",
		Help:    "Time to serve HTTP requests, by method, chi route pattern and status code.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route", "code"})
	registerOrReuse(reg, &hist)
	return hist
}

// roles wraps handlers in the role they require. The reader reads and runs
// the pure computations, the sensor also ingests, the operator also acts
// (records receipts, edits zones). Probes, the OpenAPI document and the
// map's static files stay open.
type roles struct {
	reader, sensor, operator func(http.HandlerFunc) http.HandlerFunc
}

func rolesOf(a *Authenticator) roles {
	return roles{
		reader:   func(h http.HandlerFunc) http.HandlerFunc { return require(a, RoleReader, h) },
		sensor:   func(h http.HandlerFunc) http.HandlerFunc { return require(a, RoleSensor, h) },
		operator: func(h http.HandlerFunc) http.HandlerFunc { return require(a, RoleOperator, h) },
	}
}

// baseRoutes are the paths under the base path: probes, the OpenAPI
// document, the map, and /v1 behind the rate limit.
func baseRoutes(r chi.Router, d Deps) {
	role := rolesOf(d.Auth)
	var limiter *rateLimiter
	if d.RateLimit > 0 {
		limiter = newRateLimiter(d.RateLimit)
	}
	r.Get("/healthz", handleHealthz())
	r.Get("/readyz", handleReadyz(d))
	r.Get("/openapi.json", handleOpenAPI(d))
	r.Get("/data/{file}", role.reader(handleReadsbData(d))) // readsb's documents for tar1090 (issue 21)
	if d.Web != nil {
		r.Get("/", d.Web.ServeHTTP)
		r.Get("/ui/*", d.Web.ServeHTTP)
	}
	r.Route("/v1", func(r chi.Router) {
		r.Use(limiter.limit)
		v1Routes(r, d, role)
	})
}

// v1Routes are the paths of the versioned API, /v1/...
func v1Routes(r chi.Router, d Deps, role roles) {
	reader, sensor, operator := role.reader, role.sensor, role.operator
	r.Get("/honest", handleHonest(d))

	// Decoders.
	r.Post("/ads-b/decode", reader(handleADSBDecode(d)))
	r.Post("/remote-id/decode", reader(handleRemoteIDDecode(d)))
	r.Post("/mavlink/parse", reader(handleMAVLinkParse(d)))

	// Reference data.
	r.Get("/drones/database", reader(handleDronesList(d)))
	r.Get("/drones/{id}", reader(handleDroneGet(d)))
	r.Get("/lambda", reader(handleLambda(d)))
	r.Get("/research", reader(handleResearch(d)))
	r.Get("/samples", reader(handleSamples(d)))
	r.Get("/mcp/tools", reader(handleMCPTools(d)))

	// The gate.
	r.Post("/counter-uas/evaluate", operator(storing(d, handleEvaluate(d))))
	r.Get("/swarm/topology", reader(handleSwarmTopologyGet(d)))
	r.Post("/swarm/topology", reader(handleSwarmTopologyPost(d)))
	r.Get("/threats/active", reader(handleThreatsActive(d)))
	r.Get("/threats/stream", reader(handleThreatsStream(d)))
	r.Get("/geofences", reader(handleGeofencesList(d)))
	r.Get("/geofences/{id}", reader(handleGeofenceGet(d)))
	r.Get("/geofences/versions/{sha256}", reader(handleGeofenceVersion(d))) // issue 23
	r.Put("/geofences/{id}", operator(storing(d, handleGeofencePut(d))))
	r.Delete("/geofences/{id}", operator(storing(d, handleGeofenceDelete(d))))
	r.Get("/allowlist", reader(handleAllowlistGet(d)))
	r.Put("/allowlist", operator(storing(d, handleAllowlistPut(d))))

	// The pipeline.
	r.Post("/ingest/{protocol}", sensor(storing(d, handleIngest(d))))
	r.Get("/tracks", reader(handleTracksList(d)))
	r.Get("/tracks/{id}", reader(handleTrackGet(d)))
	r.Get("/sensors", reader(handleSensorsList(d)))
	r.Get("/sensors/{id}", reader(handleSensorGet(d)))
	r.Get("/alerts", reader(handleAlertsList(d)))    // issue 19
	r.Get("/alerts/{id}", reader(handleAlertGet(d))) // issue 19
	r.Get("/tracks/{id}/history", reader(handleTrackHistory(d)))
	r.Get("/history", reader(handleHistoryArea(d)))

	// Outputs (issue 18: CoT/TAK sinks).
	r.Get("/outputs", reader(handleOutputs(d)))

	// The ledger.
	r.Post("/receipt/emit", operator(storing(d, handleReceiptEmit(d))))
	r.Get("/receipt/ledger", reader(handleReceiptLedger(d)))
	r.Get("/receipt/checkpoint", reader(handleReceiptCheckpoint(d)))
	r.Get("/receipt/keys", reader(handleReceiptKeys(d)))
	r.Get("/receipt/proof/consistency", reader(handleReceiptConsistency(d)))
	r.Get("/receipt/{index}", reader(handleReceiptGet(d)))
}

// hostRoutes are the paths at the host root: the OpenAPI document, the
// metrics, the redirect to the base path and the interface contract's
// compatibility aliases (docs/INTERFACE.md).
func hostRoutes(r chi.Router, d Deps) {
	base := d.BasePath
	r.Get("/openapi.json", handleOpenAPI(d))
	if d.Gatherer != nil {
		metrics := promhttp.HandlerFor(d.Gatherer, promhttp.HandlerOpts{})
		if d.MetricsToken != "" {
			mt, err := NewAuthenticator([]TokenEntry{{Name: "metrics", Role: "reader", SHA256: sha256Hex(d.MetricsToken)}})
			if err == nil {
				metrics = require(mt, RoleReader, metrics.ServeHTTP)
			}
		}
		r.Handle("/metrics", metrics)
	}
	if base != "" && base != "/" {
		r.Get("/", func(w http.ResponseWriter, req *http.Request) {
			http.Redirect(w, req, base+"/", http.StatusFound)
		})
	}
	r.Get("/api/vessels/healthz", handleHealthz())
	r.HandleFunc("/api/vessels/v1/cuas-redirect", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, base+"/", http.StatusPermanentRedirect)
	})
}

// methodNotAllowed answers 405 with the Allow header listing the methods
// that the path does route.
func methodNotAllowed(mux chi.Routes) http.HandlerFunc {
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions}
	return func(w http.ResponseWriter, req *http.Request) {
		var allow []string
		for _, m := range methods {
			// A GET route also answers HEAD (middleware.GetHead).
			if mux.Match(chi.NewRouteContext(), m, req.URL.Path) ||
				m == http.MethodHead && mux.Match(chi.NewRouteContext(), http.MethodGet, req.URL.Path) {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, req, http.StatusMethodNotAllowed,
			req.Method+" is not allowed on "+req.URL.Path+"; allowed: "+strings.Join(allow, ", "))
	}
}

// registerOrReuse registers a collector, or reuses the one already
// registered under the same description (tests build many servers on one
// registry).
func registerOrReuse(reg prometheus.Registerer, hist **prometheus.HistogramVec) {
	if err := reg.Register(*hist); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			if h, ok := are.ExistingCollector.(*prometheus.HistogramVec); ok {
				*hist = h
			}
		}
	}
}

// unavailable answers 503 when a dependency is absent at run time.
// storingRetryAfter is the Retry-After of a write refused for lack of
// space: the free space is checked every second.
const storingRetryAfter = "10"

// storing wraps a handler that stores what it is sent: while d.Storage
// says a store is below its low mark, it answers 503 with Retry-After
// rather than a success for something that would not be kept.
func storing(d Deps, h http.HandlerFunc) http.HandlerFunc {
	if d.Storage == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if err := d.Storage(); err != nil {
			w.Header().Set("Retry-After", storingRetryAfter)
			writeProblem(w, r, http.StatusServiceUnavailable, err.Error())
			return
		}
		h(w, r)
	}
}

func unavailable(w http.ResponseWriter, r *http.Request, what string) {
	w.Header().Set("Retry-After", "5")
	writeProblem(w, r, http.StatusServiceUnavailable, what+" is not available")
}
