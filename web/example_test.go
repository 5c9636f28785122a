package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/cuasd/cuasd/web"
)

// The map is mounted at the API's base path: index.html at {base}/ and the
// files under {base}/ui/.
func ExampleHandler() {
	h := web.Handler("/api/cuas", web.Options{})
	for _, p := range []string{"/api/cuas/", "/api/cuas/ui/js/main.js", "/api/cuas/ui/missing.js"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		fmt.Println(p, rec.Code, rec.Header().Get("Content-Type"))
	}
	// Output:
	// /api/cuas/ 200 text/html; charset=utf-8
	// /api/cuas/ui/js/main.js 200 text/javascript; charset=utf-8
	// /api/cuas/ui/missing.js 404 application/problem+json
}

// Validate a configured tile server at start-up, so a typo fails loudly.
func ExampleOptions_Validate() {
	fmt.Println(web.Options{TileURL: "https://tile.example.org/{z}/{x}/{y}.png"}.Validate())
	fmt.Println(web.Options{TileURL: "https://tile.example.org/tiles.png"}.Validate())
	// Output:
	// <nil>
	// web: TileURL: must contain {z}
}
