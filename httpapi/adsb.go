package httpapi

import "net/http"

// handleADSBDecode serves POST /v1/ads-b/decode.
func handleADSBDecode(d Deps) http.HandlerFunc { return notBuilt("the ADS-B decoder") }
