package httpapi

import "net/http"

// handleRemoteIDDecode serves POST /v1/remote-id/decode.
func handleRemoteIDDecode(d Deps) http.HandlerFunc { return notBuilt("the Remote ID decoder") }
