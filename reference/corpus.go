package reference

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sync"
)

//go:embed data/research.json
var researchJSON []byte

//go:embed data/samples.json
var samplesJSON []byte

// ResearchKinds are the allowed values of Document.Kind.
var ResearchKinds = []string{"standard", "regulation", "specification", "rfc", "government_report", "paper", "book", "documentation"}

// Document is one entry of the research corpus: a public document the
// service rests on, with why it matters here.
type Document struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Publisher string `json:"publisher"`
	// Year is the publication year, or nil for living documents whose
	// consulted source states none.
	Year      *int   `json:"year"`
	URL       string `json:"url"`
	Kind      string `json:"kind"`
	Relevance string `json:"relevance"`
}

// Sample is one protocol test vector: an input and the decode that an
// independent reference implementation produced for it. Input and Expect
// are kept verbatim from the shared vector files, so their field names are
// those files' conventions, not cuasd's API.
type Sample struct {
	ID       string `json:"id"`
	Protocol string `json:"protocol"`
	Kind     string `json:"kind"`
	// Valid is false for malformed input that a decoder must reject (or,
	// for MAVLink, whose acceptance depends on policy; see Reference).
	Valid bool `json:"valid"`
	// Input holds "hex", or for an ADS-B CPR pair "even", "odd" and
	// "newest", plus any reference position or signing key.
	Input map[string]any `json:"input"`
	// Expect is the reference decode; null for input with no decode.
	Expect json.RawMessage `json:"expect"`
	// Reference is what the reference implementation did with invalid
	// input (e.g. the MAVLink C parser's counters).
	Reference json.RawMessage `json:"reference_behaviour,omitempty"`
	Note      string          `json:"note,omitempty"`
	Source    string          `json:"source"`
}

// Protocols are the allowed values of Sample.Protocol.
var Protocols = []string{"adsb", "remoteid", "mavlink"}

type researchFile struct {
	Version   int        `json:"version"`
	Documents []Document `json:"documents"`
}

type samplesFile struct {
	Version     int      `json:"version"`
	Description string   `json:"description"`
	Samples     []Sample `json:"samples"`
}

var (
	corpusOnce sync.Once
	research   []Document
	samples    []Sample
	corpusErr  error
)

func loadCorpus() {
	var r researchFile
	if corpusErr = strictJSON("", researchJSON, &r); corpusErr != nil {
		return
	}
	if corpusErr = checkResearch(r.Documents); corpusErr != nil {
		return
	}
	research = r.Documents
	var s samplesFile
	if corpusErr = strictJSON("", samplesJSON, &s); corpusErr != nil {
		return
	}
	if corpusErr = checkSamples(s.Samples); corpusErr != nil {
		return
	}
	samples = s.Samples
}

// checkResearch checks each research document: a unique slug, the
// required fields, a plausible year, an https URL, a known kind.
func checkResearch(docs []Document) error {
	seen := map[string]bool{}
	for _, d := range docs {
		if err := checkDocument(d, seen); err != nil {
			return err
		}
		seen[d.ID] = true
	}
	return nil
}

func checkDocument(d Document, seen map[string]bool) error {
	u, err := url.Parse(d.URL)
	switch {
	case !slugRE.MatchString(d.ID) || seen[d.ID]:
		return &Error{Field: "research.id", Value: d.ID, Msg: "ids are unique slugs"}
	case d.Title == "" || d.Publisher == "" || d.Relevance == "":
		return &Error{Field: "research." + d.ID, Msg: "title, publisher and relevance are required"}
	case d.Year != nil && (*d.Year < 1900 || *d.Year > 2100):
		return &Error{Field: "research." + d.ID + ".year", Msg: fmt.Sprintf("implausible year %d", *d.Year)}
	case err != nil || u.Scheme != "https" || u.Host == "":
		return &Error{Field: "research." + d.ID + ".url", Msg: "an absolute https URL is required"}
	case !slices.Contains(ResearchKinds, d.Kind):
		return &Error{Field: "research." + d.ID + ".kind", Value: d.Kind, Msg: "unknown kind", Allowed: ResearchKinds}
	}
	return nil
}

// checkSamples checks each sample: a unique id, a known protocol, an input
// and a source.
func checkSamples(xs []Sample) error {
	seen := map[string]bool{}
	for _, x := range xs {
		switch {
		case x.ID == "" || seen[x.ID]:
			return &Error{Field: "samples.id", Value: x.ID, Msg: "ids are unique and non-empty"}
		case !slices.Contains(Protocols, x.Protocol):
			return &Error{Field: "samples." + x.ID + ".protocol", Value: x.Protocol, Msg: "unknown protocol", Allowed: Protocols}
		case len(x.Input) == 0 || x.Source == "":
			return &Error{Field: "samples." + x.ID, Msg: "input and source are required"}
		}
		seen[x.ID] = true
	}
	return nil
}

// strictJSON decodes an embedded data file, refusing unknown fields; a
// failure is an *Error whose message is prefix and the decoder's.
func strictJSON(prefix string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &Error{Msg: prefix + err.Error()}
	}
	return nil
}

// Research returns the research corpus. The slice is shared: do not modify.
func Research() ([]Document, error) {
	corpusOnce.Do(loadCorpus)
	return research, corpusErr
}

// Samples returns the protocol sample vectors. The slice is shared: do not
// modify.
func Samples() ([]Sample, error) {
	corpusOnce.Do(loadCorpus)
	return samples, corpusErr
}
