package httpapi

import "net/http"

// handleEvaluate serves POST /v1/counter-uas/evaluate.
func handleEvaluate(d Deps) http.HandlerFunc { return notBuilt("the counter-UAS gate") }
