package httpapi

import "net/http"

// DroneCatalog is the drone database as the HTTP layer reads it.
type DroneCatalog interface{}

func handleDronesList(d Deps) http.HandlerFunc { return notBuilt("the drone database") }
func handleDroneGet(d Deps) http.HandlerFunc   { return notBuilt("the drone database") }
