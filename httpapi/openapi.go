package httpapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"sync"

	"gopkg.in/yaml.v3"
)

// The OpenAPI document is written spec-first as YAML fragments, one per
// area, so each subsystem owns the description of its own endpoints.
// base.yaml holds info, servers and the shared components; every other
// fragment contributes paths and component schemas. Duplicate keys are an
// error: two fragments must never describe the same thing.
//
//go:embed openapi/*.yaml
var openapiFS embed.FS

var (
	openapiOnce sync.Once
	openapiDoc  map[string]any
	openapiErr  error
)

// openAPIDocument returns the merged OpenAPI document (paths relative to
// the base path). The result is shared: callers must not modify it.
func openAPIDocument() (map[string]any, error) {
	openapiOnce.Do(func() { openapiDoc, openapiErr = mergeOpenAPI(openapiFS) })
	return openapiDoc, openapiErr
}

func mergeOpenAPI(fsys fs.FS) (map[string]any, error) {
	names, err := fs.Glob(fsys, "openapi/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var doc map[string]any
	if err := readYAML(fsys, "openapi/base.yaml", &doc); err != nil {
		return nil, err
	}
	for _, name := range names {
		if name == "openapi/base.yaml" {
			continue
		}
		var frag map[string]any
		if err := readYAML(fsys, name, &frag); err != nil {
			return nil, err
		}
		for key, val := range frag {
			switch key {
			case "paths":
				if err := mergeInto(doc, "paths", val, name); err != nil {
					return nil, err
				}
			case "components":
				comps, ok := val.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s: components must be a mapping", name)
				}
				for kind, entries := range comps {
					dst := ensureMap(doc, "components")
					if err := mergeInto(dst, kind, entries, name); err != nil {
						return nil, err
					}
				}
			default:
				return nil, fmt.Errorf("%s: a fragment may hold only paths and components, found %q", name, key)
			}
		}
	}
	addCommonResponses(doc)
	return doc, nil
}

// addCommonResponses documents, on every /v1 operation but the public
// disclosure, the answers the shared middleware can give (authentication,
// role, rate limit, oversized headers) and the bearer security, so fragments need not repeat
// them.
func addCommonResponses(doc map[string]any) {
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, ok := item.(map[string]any)
		if !ok || len(p) < 4 || p[:4] != "/v1/" {
			continue
		}
		for method, op := range ops {
			o, ok := op.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			resp := ensureMap(o, "responses")
			add := map[string]string{"429": "TooManyRequests", "431": "HeadersTooLarge"}
			if p != "/v1/honest" {
				add["401"], add["403"] = "Unauthorized", "Forbidden"
				if _, ok := o["security"]; !ok {
					o["security"] = []any{map[string]any{"bearerAuth": []any{}}, map[string]any{}}
				}
			}
			for code, name := range add {
				if _, ok := resp[code]; !ok {
					resp[code] = map[string]any{"$ref": "#/components/responses/" + name}
				}
			}
		}
	}
}

func readYAML(fsys fs.FS, name string, dst *map[string]any) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if *dst == nil {
		*dst = map[string]any{}
	}
	return nil
}

func ensureMap(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[key] = v
	return v
}

func mergeInto(doc map[string]any, key string, val any, from string) error {
	src, ok := val.(map[string]any)
	if !ok {
		if val == nil {
			return nil
		}
		return fmt.Errorf("%s: %s must be a mapping", from, key)
	}
	dst := ensureMap(doc, key)
	for k, v := range src {
		if _, dup := dst[k]; dup {
			return fmt.Errorf("%s: %s.%s is already defined by another fragment", from, key, k)
		}
		dst[k] = v
	}
	return nil
}

// OpenAPIJSON returns the merged OpenAPI document as indented JSON, with
// the server URL set to basePath: what /openapi.json serves, and what
// `make lint-openapi` hands to an independent linter.
func OpenAPIJSON(basePath string) ([]byte, error) {
	doc, err := openAPIDocument()
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		out[k] = v
	}
	out["servers"] = []any{map[string]any{"url": basePath, "description": "this cuasd instance"}}
	return json.MarshalIndent(out, "", "  ")
}

// handleOpenAPI serves the merged document as JSON, with the server URL set
// to the configured base path.
func handleOpenAPI(d Deps) http.HandlerFunc {
	var (
		once sync.Once
		body []byte
		err  error
	)
	return func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { body, err = OpenAPIJSON(d.BasePath) })
		if err != nil {
			writeProblem(w, r, http.StatusInternalServerError, "the embedded OpenAPI document is invalid: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}
