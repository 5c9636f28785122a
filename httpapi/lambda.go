package httpapi

import "net/http"

// handleLambda serves GET /v1/lambda.
func handleLambda(d Deps) http.HandlerFunc { return notBuilt("the Λ definitions") }
