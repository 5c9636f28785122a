package httpapi

import "net/http"

// TrackReader reads the fused track picture.
type TrackReader interface{}

func handleTracksList(d Deps) http.HandlerFunc { return notBuilt("the track store") }
func handleTrackGet(d Deps) http.HandlerFunc   { return notBuilt("the track store") }
