package httpapi

import "net/http"

// ZoneStore holds the geofences and the allow-list.
type ZoneStore interface{}

func handleGeofencesList(d Deps) http.HandlerFunc  { return notBuilt("geofences") }
func handleGeofenceGet(d Deps) http.HandlerFunc    { return notBuilt("geofences") }
func handleGeofencePut(d Deps) http.HandlerFunc    { return notBuilt("geofences") }
func handleGeofenceDelete(d Deps) http.HandlerFunc { return notBuilt("geofences") }
func handleAllowlistGet(d Deps) http.HandlerFunc   { return notBuilt("the allow-list") }
func handleAllowlistPut(d Deps) http.HandlerFunc   { return notBuilt("the allow-list") }
