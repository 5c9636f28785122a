package httpapi

import "net/http"

func handleResearch(d Deps) http.HandlerFunc { return notBuilt("the research corpus") }
func handleSamples(d Deps) http.HandlerFunc  { return notBuilt("the sample vectors") }
func handleMCPTools(d Deps) http.HandlerFunc { return notBuilt("the tool catalog") }
