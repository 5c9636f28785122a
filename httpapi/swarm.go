package httpapi

import "net/http"

// LiveTracks gives the swarm endpoint the current track positions.
type LiveTracks interface{}

func handleSwarmTopologyGet(d Deps) http.HandlerFunc  { return notBuilt("swarm topology") }
func handleSwarmTopologyPost(d Deps) http.HandlerFunc { return notBuilt("swarm topology") }
