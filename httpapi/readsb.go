package httpapi

import (
	"net/http"
	"regexp"

	"github.com/go-chi/chi/v5"
)

// ReadsbDocuments serves readsb's JSON documents (package
// output/readsbjson, issue 21).
type ReadsbDocuments interface {
	// Document returns the current document of that name (aircraft.json,
	// receiver.json, stats.json, history_N.json); false when there is none.
	Document(name string) ([]byte, bool)
}

var readsbDocName = regexp.MustCompile(`^(aircraft|receiver|stats|history_[0-9]{1,4})\.json$`)

// handleReadsbData is GET {base}/data/{file}: the documents tar1090 and
// graphs1090 read from readsb, with CORS open so that tar1090's html/
// served from another origin can point its data URL here.
func handleReadsbData(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := chi.URLParam(r, "file")
		if d.Readsb == nil {
			writeProblem(w, r, http.StatusNotImplemented, "the readsb JSON output is off (start cuasd with --readsb-json)")
			return
		}
		if !readsbDocName.MatchString(name) {
			writeProblem(w, r, http.StatusNotFound, "no readsb document "+name+"; there are aircraft.json, receiver.json, stats.json and history_N.json")
			return
		}
		doc, ok := d.Readsb.Document(name)
		if !ok {
			writeProblem(w, r, http.StatusNotFound, "no "+name+" yet (history files appear every 30 s; receiver.json says how many)")
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-cache")
		h.Set("Access-Control-Allow-Origin", "*")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(doc)
	}
}
