package httpapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// newTestServer builds the full handler for tests with quiet logging and
// the default base path, unless d sets them.
func newTestServer(t testing.TB, d Deps) http.Handler {
	t.Helper()
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return NewServer(d)
}

// testBase is the base path newTestServer mounts the API at by default.
const testBase = "/api/cuas"

// do sends one request through h and returns the recorder; body may be nil,
// a string, []byte or a value to JSON-encode. JSON bodies get the JSON
// content type.
func do(t testing.TB, h http.Handler, method, path string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	case []byte:
		rd, ct = bytes.NewReader(b), "application/json"
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, ct = bytes.NewReader(buf), "application/json"
	}
	req := httptest.NewRequest(method, path, rd)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkOpenAPI(t, req, rec)
	return rec
}

var (
	oaOnce     sync.Once
	oaCompiler *jsonschema.Compiler
	oaDoc      map[string]any
	oaErr      error
	oaCache    sync.Map // schema location → *jsonschema.Schema
	oaChecked  sync.Map // "method /path" whose success answer was checked → true
)

const oaURL = "file:///openapi.json"

func loadOA() {
	doc, err := openAPIDocument()
	if err != nil {
		oaErr = err
		return
	}
	if err := strictOpenAPI(doc); err != nil {
		oaErr = err // an unknown keyword would otherwise pass as an annotation
		return
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		oaErr = err
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		oaErr = err
		return
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(oaURL, v); err != nil {
		oaErr = err
		return
	}
	oaCompiler = c
	_ = json.Unmarshal(raw, &oaDoc)
}

// checkOpenAPI validates a recorded response against the merged OpenAPI
// document: the path and method must be documented, the status must be a
// documented response, the content type one of its media types, and the
// body must match that media type's schema. Paths are matched below the
// default test base path.
func checkOpenAPI(t testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	oaOnce.Do(loadOA)
	if oaErr != nil {
		t.Fatalf("OpenAPI document: %v", oaErr)
	}
	path := req.URL.Path
	if !strings.HasPrefix(path, testBase+"/") {
		return // host-root paths (metrics, aliases) are not part of the document
	}
	rel := strings.TrimPrefix(path, testBase)
	tmpl, ok := matchPath(oaDoc["paths"].(map[string]any), rel)
	if !ok {
		if rec.Code == http.StatusNotFound {
			return // an undocumented path answering 404 is what we want
		}
		t.Errorf("OpenAPI: %s %s answered %d but the path is not documented", req.Method, rel, rec.Code)
		return
	}
	ops := oaDoc["paths"].(map[string]any)[tmpl].(map[string]any)
	if rec.Code < 300 {
		oaChecked.Store(strings.ToLower(req.Method)+" "+tmpl, true)
	}
	op, ok := ops[strings.ToLower(req.Method)].(map[string]any)
	if !ok {
		if rec.Code == http.StatusMethodNotAllowed {
			return
		}
		t.Errorf("OpenAPI: %s %s is not documented (answered %d)", req.Method, tmpl, rec.Code)
		return
	}
	responses, _ := op["responses"].(map[string]any)
	code := strconv.Itoa(rec.Code)
	key := ""
	for _, k := range []string{code, code[:1] + "XX", "default"} {
		if _, ok := responses[k]; ok {
			key = k
			break
		}
	}
	if key == "" {
		t.Errorf("OpenAPI: %s %s answered %d, which is not a documented response (body %s)",
			req.Method, tmpl, rec.Code, truncate(rec.Body.String()))
		return
	}
	resp := resolveRef(responses[key].(map[string]any))
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if rec.Body.Len() > 0 && req.Method != http.MethodHead {
			t.Errorf("OpenAPI: %s %s %d documents no body but one was sent", req.Method, tmpl, rec.Code)
		}
		return
	}
	mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	media, ok := content[mt].(map[string]any)
	if !ok {
		t.Errorf("OpenAPI: %s %s %d answered Content-Type %q, documented: %v", req.Method, tmpl, rec.Code, mt, keys(content))
		return
	}
	if _, ok := media["schema"]; !ok || !strings.HasSuffix(mt, "json") {
		return
	}
	loc := oaURL + "#/paths/" + escapePtr(tmpl) + "/" + strings.ToLower(req.Method) + "/responses/" + key
	if ref, ok := responses[key].(map[string]any)["$ref"].(string); ok {
		loc = oaURL + ref
	}
	loc += "/content/" + escapePtr(mt) + "/schema"
	sch, err := compileAt(loc)
	if err != nil {
		t.Fatalf("OpenAPI: compile %s: %v", loc, err)
	}
	body, err := jsonschema.UnmarshalJSON(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Errorf("OpenAPI: %s %s %d body is not JSON: %v: %s", req.Method, tmpl, rec.Code, err, truncate(rec.Body.String()))
		return
	}
	if err := sch.Validate(body); err != nil {
		t.Errorf("OpenAPI: %s %s %d body does not match its schema: %v\nbody: %s", req.Method, tmpl, rec.Code, err, truncate(rec.Body.String()))
	}
}

func compileAt(loc string) (*jsonschema.Schema, error) {
	if s, ok := oaCache.Load(loc); ok {
		return s.(*jsonschema.Schema), nil
	}
	s, err := oaCompiler.Compile(loc)
	if err != nil {
		return nil, err
	}
	oaCache.Store(loc, s)
	return s, nil
}

func resolveRef(m map[string]any) map[string]any {
	ref, ok := m["$ref"].(string)
	if !ok {
		return m
	}
	cur := any(oaDoc)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		cur = cur.(map[string]any)[part]
	}
	return cur.(map[string]any)
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// matchPath finds the documented path template that matches a concrete
// path, preferring literal segments over parameters.
func matchPath(paths map[string]any, p string) (string, bool) {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	best, bestScore := "", -1
	for tmpl := range paths {
		ts := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(ts) != len(segs) {
			continue
		}
		score := 0
		ok := true
		for i := range ts {
			switch {
			case ts[i] == segs[i]:
				score++
			case strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") && segs[i] != "":
			default:
				ok = false
			}
		}
		if ok && score > bestScore {
			best, bestScore = tmpl, score
		}
	}
	return best, bestScore >= 0
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func truncate(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// TestMain runs the tests and then, when the whole package ran (no -run
// filter) and passed, checks that every documented operation had a
// success answer validated against its schema by checkOpenAPI (issue 24,
// item 1): an endpoint added without such a test fails the package.
func TestMain(m *testing.M) {
	code := m.Run()
	if f := flag.Lookup("test.run"); code == 0 && f != nil && f.Value.String() == "" && !testing.Short() {
		if missing := unvalidatedOperations(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "OpenAPI: no test validated a success answer of:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// sseOperations answer text/event-stream, which checkOpenAPI does not
// read (threats_test.go reads the stream over a real connection).
var sseOperations = map[string]bool{"get /v1/threats/stream": true}

func unvalidatedOperations() []string {
	oaOnce.Do(loadOA)
	if oaErr != nil {
		return []string{oaErr.Error()}
	}
	var missing []string
	for path, item := range oaDoc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			key := method + " " + path
			if method == "parameters" || sseOperations[key] {
				continue
			}
			if _, ok := oaChecked.Load(key); !ok {
				missing = append(missing, key)
			}
		}
	}
	sort.Strings(missing)
	return missing
}
