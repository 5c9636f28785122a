package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed static
var staticFS embed.FS

// Options are the settings of the map that a site chooses.
type Options struct {
	// TileURL is an optional online raster tile layer drawn over the
	// bundled world outline, as a Leaflet URL template such as
	// "https://tile.example.org/{z}/{x}/{y}.png" ({s} may stand for the
	// whole first label of the host). Empty means offline only, which is
	// the default: the page then fetches nothing from outside cuasd.
	TileURL string
	// TileAttribution is the attribution text the tile provider requires;
	// it is shown as plain text, never as HTML.
	TileAttribution string
}

// Validate reports whether the options can be served: a non-empty TileURL
// must be an absolute http or https URL template with {z}, {x} and {y}.
// Config loading should call it so a bad URL stops start-up instead of
// showing an empty map.
func (o Options) Validate() error {
	if o.TileURL == "" {
		return nil
	}
	_, err := tileOrigin(o.TileURL)
	return err
}

// Error is the error type of this package: an invalid option.
type Error struct {
	Field  string // the option, e.g. "TileURL"
	Reason string
}

func (e *Error) Error() string { return "web: " + e.Field + ": " + e.Reason }

// tileOrigin checks a tile URL template and returns the CSP source that
// allows the browser to load its images.
func tileOrigin(tmpl string) (string, error) {
	for _, p := range []string{"{z}", "{x}", "{y}"} {
		if !strings.Contains(tmpl, p) {
			return "", &Error{"TileURL", "must contain " + p}
		}
	}
	scheme, rest, ok := strings.Cut(tmpl, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return "", &Error{"TileURL", "must be an absolute http or https URL"}
	}
	host, _, _ := strings.Cut(rest, "/")
	// "{s}" picks a subdomain; a CSP host-source can wildcard only the
	// leftmost label, so that is the one place a placeholder may stand.
	wild := strings.HasPrefix(host, "{s}.")
	if wild {
		host = host[len("{s}."):]
	}
	u, err := url.Parse(scheme + "://" + host + "/")
	if err != nil || u.Host != host || host == "" || strings.ContainsAny(host, "{}@") {
		return "", &Error{"TileURL", "the host must be a plain host[:port], optionally after a leading {s}."}
	}
	if wild {
		host = "*." + host
	}
	return scheme + "://" + host, nil
}

// asset is one embedded file, ready to serve.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

// Handler returns the handler of the map. basePath is the API's base path
// ("/api/cuas"; "" or "/" for the host root): the handler answers
// {base}/ with index.html (and redirects {base} there), and {base}/ui/NAME
// with the embedded file static/NAME. Every other path is 404.
//
// Files are served with an ETag and "Cache-Control: no-cache", so a new
// binary is picked up on the next load while unchanged files cost a 304.
// A Content-Security-Policy limits the page to cuasd itself (plus the
// tile server when opts.TileURL is set). An invalid opts.TileURL (see
// Options.Validate) is left out rather than served.
func Handler(basePath string, opts Options) http.Handler {
	base := strings.TrimSuffix(basePath, "/")
	tileSrc := ""
	if o, err := tileOrigin(opts.TileURL); err == nil {
		tileSrc = " " + o
	} else {
		opts.TileURL = ""
	}
	h := &handler{
		base:   base,
		assets: map[string]asset{},
		csp: "default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:" + tileSrc +
			"; style-src 'self' 'unsafe-inline'; font-src 'self'; object-src 'none'; base-uri 'none';" +
			" form-action 'none'; frame-ancestors 'none'",
	}
	sub, _ := fs.Sub(staticFS, "static")
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "index.html" {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		h.assets[p] = newAsset(b, contentType(p))
		return nil
	})
	var buf bytes.Buffer
	idx := template.Must(template.ParseFS(staticFS, "static/index.html"))
	if err := idx.Execute(&buf, indexData{Base: base, TileURL: opts.TileURL, TileAttribution: opts.TileAttribution}); err != nil {
		panic(err) // the template is embedded: a failure is a bug caught by the tests
	}
	h.index = newAsset(buf.Bytes(), "text/html; charset=utf-8")
	return h
}

// indexData is what index.html is rendered with. The values reach the
// scripts through <meta> elements, not an inline script, so the CSP can
// forbid inline scripts altogether.
type indexData struct {
	Base            string
	TileURL         string
	TileAttribution string
}

func newAsset(b []byte, ctype string) asset {
	sum := sha256.Sum256(b)
	return asset{body: b, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// contentType is fixed here rather than taken from the system's MIME
// tables, which differ between machines: a module script served with the
// wrong type does not run.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".geojson":
		return "application/geo+json"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".md", "":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

type handler struct {
	base   string
	index  asset
	assets map[string]asset
	csp    string
}

// modTime is the zero time: ETags, not dates, decide freshness.
var modTime time.Time

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == h.base && h.base != "":
		http.Redirect(w, r, h.base+"/", http.StatusFound)
	case p == h.base+"/":
		h.serve(w, r, h.index)
	case strings.HasPrefix(p, h.base+"/ui/"):
		a, ok := h.assets[strings.TrimPrefix(p, h.base+"/ui/")]
		if !ok {
			notFound(w, p)
			return
		}
		h.serve(w, r, a)
	default:
		notFound(w, p)
	}
}

func (h *handler) serve(w http.ResponseWriter, r *http.Request, a asset) {
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("ETag", a.etag)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if strings.HasPrefix(a.ctype, "text/html") {
		hd.Set("Content-Security-Policy", h.csp)
	}
	http.ServeContent(w, r, "", modTime, bytes.NewReader(a.body))
}

// notFound answers in the API's RFC 9457 shape, so a client sees one error
// model across the whole base path.
func notFound(w http.ResponseWriter, p string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	detail, _ := json.Marshal("no map file at " + p)
	fmt.Fprintf(w, `{"type":"https://github.com/cuasd/cuasd/blob/main/docs/ERRORS.md#not-found","title":"Not Found","status":404,"detail":%s}`+"\n", detail)
}
