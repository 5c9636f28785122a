package httpapi

import "net/http"

// handleMAVLinkParse serves POST /v1/mavlink/parse.
func handleMAVLinkParse(d Deps) http.HandlerFunc { return notBuilt("the MAVLink parser") }
