package httpapi

import "net/http"

// ThreatBoard is the live board of evaluated tracks.
type ThreatBoard interface{}

func handleThreatsActive(d Deps) http.HandlerFunc { return notBuilt("the threat board") }
func handleThreatsStream(d Deps) http.HandlerFunc { return notBuilt("the threat board stream") }
