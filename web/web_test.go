package web_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/web"
)

func get(t *testing.T, h http.Handler, p string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, p, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestIndex(t *testing.T) {
	for _, base := range []string{"/api/cuas", "/x", ""} {
		h := web.Handler(base, web.Options{})
		rec := get(t, h, base+"/")
		if rec.Code != http.StatusOK {
			t.Fatalf("base %q: GET %s/ = %d", base, base, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("base %q: Content-Type %q", base, ct)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("base %q: CSP %q lacks %q", base, csp, want)
			}
		}
		body := rec.Body.String()
		if !strings.Contains(body, `<meta name="cuasd:base" content="`+base+`">`) {
			t.Errorf("base %q: index does not carry the base path", base)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("base %q: inline script in index.html (the CSP forbids it)", base)
		}
	}
}

// TestIndexLinksResolve follows every local src= and href= of index.html:
// a wrong path would leave the page without its code or styles.
func TestIndexLinksResolve(t *testing.T) {
	const base = "/api/cuas"
	h := web.Handler(base, web.Options{})
	body := get(t, h, base+"/").Body.String()
	links := regexp.MustCompile(`(?:src|href)="(/[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(links) < 4 {
		t.Fatalf("found %d links in index.html, want the icon, 2 stylesheets and 2 scripts", len(links))
	}
	want := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	for _, l := range links {
		rec := get(t, h, l[1])
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d", l[1], rec.Code)
			continue
		}
		if ct := want[path.Ext(l[1])]; ct != "" && rec.Header().Get("Content-Type") != ct {
			t.Errorf("GET %s: Content-Type %q, want %q", l[1], rec.Header().Get("Content-Type"), ct)
		}
	}
}

// TestModuleImportsResolve checks that every relative import of every
// module names a file that is served: the browser refuses the whole module
// graph if one is missing.
func TestModuleImportsResolve(t *testing.T) {
	h := web.Handler("/b", web.Options{})
	re := regexp.MustCompile(`(?m)^import\s[^"]*"(\./[^"]+)"`)
	files, err := fs.Glob(os.DirFS("static/js"), "*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no modules: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile("static/js/" + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			p := "/b/ui/js/" + path.Clean(m[1])
			if rec := get(t, h, p); rec.Code != http.StatusOK {
				t.Errorf("%s imports %s: GET %s = %d", f, m[1], p, rec.Code)
			}
		}
	}
}

func TestPaths(t *testing.T) {
	h := web.Handler("/api/cuas/", web.Options{}) // a trailing slash is tolerated
	tests := []struct {
		path     string
		code     int
		location string
	}{
		{"/api/cuas", http.StatusFound, "/api/cuas/"},
		{"/api/cuas/", http.StatusOK, ""},
		{"/api/cuas/ui/app.css", http.StatusOK, ""},
		{"/api/cuas/ui/vendor/leaflet/leaflet.js", http.StatusOK, ""},
		{"/api/cuas/ui/vendor/world-atlas/countries-110m.geojson", http.StatusOK, ""},
		{"/api/cuas/ui/index.html", http.StatusNotFound, ""}, // only served rendered, at {base}/
		{"/api/cuas/ui/", http.StatusNotFound, ""},           // no directory listings
		{"/api/cuas/ui/js", http.StatusNotFound, ""},
		{"/api/cuas/ui/nope.js", http.StatusNotFound, ""},
		{"/api/cuas/ui/../web.go", http.StatusNotFound, ""},
		{"/api/cuas/ui/%2e%2e/web.go", http.StatusNotFound, ""},
		{"/elsewhere/", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		rec := get(t, h, tc.path)
		if rec.Code != tc.code {
			t.Errorf("GET %s = %d, want %d", tc.path, rec.Code, tc.code)
		}
		if tc.location != "" && rec.Header().Get("Location") != tc.location {
			t.Errorf("GET %s: Location %q, want %q", tc.path, rec.Header().Get("Location"), tc.location)
		}
		if rec.Code == http.StatusNotFound {
			var p struct {
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			if rec.Header().Get("Content-Type") != "application/problem+json" || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Status != 404 || p.Detail == "" {
				t.Errorf("GET %s: 404 is not a problem+json document: %q", tc.path, rec.Body.String())
			}
		}
	}
}

func TestConditionalGet(t *testing.T) {
	h := web.Handler("/api/cuas", web.Options{})
	for _, p := range []string{"/api/cuas/", "/api/cuas/ui/js/main.js"} {
		first := get(t, h, p)
		etag := first.Header().Get("ETag")
		if etag == "" || first.Header().Get("Cache-Control") != "no-cache" {
			t.Fatalf("GET %s: ETag %q, Cache-Control %q", p, etag, first.Header().Get("Cache-Control"))
		}
		if rec := get(t, h, p, "If-None-Match", etag); rec.Code != http.StatusNotModified {
			t.Errorf("GET %s with its ETag = %d, want 304", p, rec.Code)
		}
		if rec := get(t, h, p, "If-None-Match", `"other"`); rec.Code != http.StatusOK {
			t.Errorf("GET %s with another ETag = %d, want 200", p, rec.Code)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		url    string
		ok     bool
		origin string // the CSP img-src the tile server gets
	}{
		{"", true, ""},
		{"https://tile.example.org/{z}/{x}/{y}.png", true, "https://tile.example.org"},
		{"http://10.0.0.5:8080/tiles/{z}/{x}/{y}.png", true, "http://10.0.0.5:8080"},
		{"https://{s}.tile.example.org/{z}/{x}/{y}.png", true, "https://*.tile.example.org"},
		{"https://tile.example.org/{z}/{x}.png", false, ""},
		{"ftp://tile.example.org/{z}/{x}/{y}.png", false, ""},
		{"//tile.example.org/{z}/{x}/{y}.png", false, ""},
		{"javascript:alert(1)//{z}/{x}/{y}", false, ""},
		{"https://a{s}.example.org/{z}/{x}/{y}.png", false, ""},
		{"https://user@tile.example.org/{z}/{x}/{y}.png", false, ""},
		{"https://tile.example.org;script-src */{z}/{x}/{y}", false, ""},
	}
	for _, tc := range tests {
		err := web.Options{TileURL: tc.url}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
		var we *web.Error
		if err != nil && (!errors.As(err, &we) || we.Field != "TileURL") {
			t.Errorf("Validate(%q) error %v is not a *web.Error about TileURL", tc.url, err)
		}
		rec := get(t, web.Handler("/api/cuas", web.Options{TileURL: tc.url}), "/api/cuas/")
		csp := rec.Header().Get("Content-Security-Policy")
		img := regexp.MustCompile(`img-src ([^;]*);`).FindStringSubmatch(csp)
		wantImg := "'self' data:"
		if tc.origin != "" {
			wantImg += " " + tc.origin
		}
		if img == nil || img[1] != wantImg {
			t.Errorf("TileURL %q: CSP img-src %q, want %q", tc.url, img, wantImg)
		}
		// An invalid URL is left out of the page, not served.
		served := strings.Contains(rec.Body.String(), `name="cuasd:tile-url" content=""`)
		if served == (tc.ok && tc.url != "") {
			t.Errorf("TileURL %q: served in the page = %v, want %v", tc.url, !served, tc.ok && tc.url != "")
		}
	}
}

// TestOptionsEscaped: the attribution is site configuration, but it is
// still only ever text in the page.
func TestOptionsEscaped(t *testing.T) {
	h := web.Handler("/api/cuas", web.Options{TileURL: "https://t.example.org/{z}/{x}/{y}.png", TileAttribution: `"><script>alert(1)</script>`})
	body := get(t, h, "/api/cuas/").Body.String()
	if strings.Contains(body, "<script>alert") {
		t.Fatal("the attribution reached the page unescaped")
	}
	if !strings.Contains(body, `content="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`) {
		t.Errorf("attribution not found escaped in:\n%s", body)
	}
}

// TestVendored: the third-party files are present with their licences, and
// the world outline is GeoJSON with no ring that jumps across the
// antimeridian (which would streak across the map).
func TestVendored(t *testing.T) {
	for _, f := range []string{"leaflet/leaflet.js", "leaflet/leaflet.css", "leaflet/LICENSE", "world-atlas/LICENSE", "world-atlas/countries-110m.geojson", "README.md"} {
		if _, err := os.Stat("static/vendor/" + f); err != nil {
			t.Errorf("vendored file missing (run `make web-vendor`): %v", err)
		}
	}
	b, err := os.ReadFile("static/vendor/world-atlas/countries-110m.geojson")
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Properties struct {
				Name string `json:"name"`
			} `json:"properties"`
			Geometry struct {
				Type        string          `json:"type"`
				Coordinates json.RawMessage `json:"coordinates"`
			} `json:"geometry"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	// Natural Earth 1:110m admin-0 countries as world-atlas 2 ships them.
	if fc.Type != "FeatureCollection" || len(fc.Features) != 177 {
		t.Fatalf("world outline: type %q with %d features, want a FeatureCollection of 177 countries", fc.Type, len(fc.Features))
	}
	for _, f := range fc.Features {
		var polys [][][][2]float64
		switch f.Geometry.Type {
		case "Polygon":
			var p [][][2]float64
			err = json.Unmarshal(f.Geometry.Coordinates, &p)
			polys = append(polys, p)
		case "MultiPolygon":
			err = json.Unmarshal(f.Geometry.Coordinates, &polys)
		default:
			t.Fatalf("%s: geometry %q", f.Properties.Name, f.Geometry.Type)
		}
		if err != nil {
			t.Fatalf("%s: %v", f.Properties.Name, err)
		}
		for _, p := range polys {
			for _, ring := range p {
				if len(ring) < 4 || ring[0] != ring[len(ring)-1] {
					t.Errorf("%s: ring of %d positions is not closed", f.Properties.Name, len(ring))
				}
				for i := 1; i < len(ring); i++ {
					if d := ring[i][0] - ring[i-1][0]; d > 180 || d < -180 {
						t.Errorf("%s: ring jumps %.1f° in longitude", f.Properties.Name, d)
						break
					}
				}
			}
		}
	}
}

// TestMountedInServer serves the map through the real API router, the way
// cuasd wires it (Deps.Web), so the routes and this handler agree on paths.
func TestMountedInServer(t *testing.T) {
	srv := httpapi.NewServer(httpapi.Deps{BasePath: "/api/cuas", Web: web.Handler("/api/cuas", web.Options{})})
	for _, p := range []string{"/api/cuas/", "/api/cuas/ui/js/main.js", "/api/cuas/ui/vendor/leaflet/leaflet.css"} {
		if rec := get(t, srv, p); rec.Code != http.StatusOK {
			t.Errorf("GET %s through httpapi = %d", p, rec.Code)
		}
	}
	if rec := get(t, srv, "/"); rec.Code != http.StatusFound || rec.Header().Get("Location") != "/api/cuas/" {
		t.Errorf("GET / = %d to %q, want a redirect to the map", rec.Code, rec.Header().Get("Location"))
	}
}
