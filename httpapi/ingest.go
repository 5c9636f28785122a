package httpapi

import "net/http"

// RawPublisher publishes raw frames to the pipeline.
type RawPublisher interface{}

func handleIngest(d Deps) http.HandlerFunc { return notBuilt("HTTP ingest") }
