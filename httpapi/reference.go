package httpapi

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cuasd/cuasd/reference"
)

// handleResearch serves GET /v1/research: the sourced research corpus.
func handleResearch(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := singleParams(w, r, nil); !ok {
			return
		}
		docs, err := reference.Research()
		if err != nil {
			writeProblem(w, r, http.StatusInternalServerError, "the research corpus is broken: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"documents": docs, "count": len(docs)})
	}
}

// handleSamples serves GET /v1/samples, optionally filtered by ?protocol=.
func handleSamples(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, ok := singleParams(w, r, []string{"protocol"})
		if !ok {
			return
		}
		proto := strings.ToLower(strings.TrimSpace(q.Get("protocol")))
		if proto != "" && !slices.Contains(reference.Protocols, proto) {
			filterProblem(w, r, &reference.Error{Field: "protocol", Value: proto, Allowed: reference.Protocols})
			return
		}
		all, err := reference.Samples()
		if err != nil {
			writeProblem(w, r, http.StatusInternalServerError, "the sample file is broken: "+err.Error())
			return
		}
		out := make([]reference.Sample, 0, len(all))
		for _, s := range all {
			if proto == "" || s.Protocol == proto {
				out = append(out, s)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"samples": out, "count": len(out)})
	}
}

// Tool is one entry of the tool catalog: an HTTP operation described for
// a tool-using client, with the JSON Schema of its input taken from the
// OpenAPI document.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Method      string         `json:"method"`
	Path        string         `json:"path"`
	InputSchema map[string]any `json:"input_schema"`
}

// notTools are operations that are plumbing rather than tools.
var notTools = []string{"healthz", "readyz", "openapi", "mcpTools", "threatStream"}

// toolCatalog derives the catalog from the merged OpenAPI document, so the
// input schemas are never written twice.
func toolCatalog(doc map[string]any) []Tool {
	paths, _ := doc["paths"].(map[string]any)
	var tools []Tool
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			name, _ := o["operationId"].(string)
			if name == "" || slices.Contains(notTools, name) {
				continue
			}
			desc, _ := o["summary"].(string)
			if long, _ := o["description"].(string); long != "" {
				desc = strings.TrimSpace(desc + ". " + long)
			}
			tools = append(tools, Tool{Name: name, Description: desc, Method: strings.ToUpper(method), Path: p,
				InputSchema: inputSchema(doc, o)})
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools
}

// inputSchema builds one JSON Schema from an operation's parameters and
// JSON request body: the body schema alone when there are no parameters,
// else an object with one property per parameter and "body".
func inputSchema(doc, op map[string]any) map[string]any {
	props := map[string]any{}
	var required []any
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		pm, _ := resolve(doc, p, 0).(map[string]any)
		name, _ := pm["name"].(string)
		if name == "" {
			continue
		}
		s, _ := pm["schema"].(map[string]any)
		if s == nil {
			s = map[string]any{}
		}
		if desc, ok := pm["description"].(string); ok {
			s = withDescription(s, desc)
		}
		props[name] = s
		if req, _ := pm["required"].(bool); req {
			required = append(required, name)
		}
	}
	var body any
	if rb, ok := resolve(doc, op["requestBody"], 0).(map[string]any); ok {
		if c, ok := rb["content"].(map[string]any); ok {
			if j, ok := c["application/json"].(map[string]any); ok {
				body = j["schema"]
			}
		}
	}
	if len(props) == 0 {
		if b, ok := body.(map[string]any); ok {
			return b
		}
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if body != nil {
		props["body"] = body
		required = append(required, "body")
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func withDescription(s map[string]any, desc string) map[string]any {
	c := make(map[string]any, len(s)+1)
	for k, v := range s {
		c[k] = v
	}
	if _, ok := c["description"]; !ok {
		c["description"] = desc
	}
	return c
}

// resolve returns a deep copy of v with every local "$ref" replaced by its
// target, so each input schema is self-contained. Depth bounds recursive
// schemas.
func resolve(doc map[string]any, v any, depth int) any {
	if depth > 12 {
		return map[string]any{}
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			var cur any = doc
			for _, part := range strings.Split(ref[2:], "/") {
				m, _ := cur.(map[string]any)
				cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
			}
			return resolve(doc, cur, depth+1)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = resolve(doc, e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolve(doc, e, depth+1)
		}
		return out
	default:
		return v
	}
}

// handleMCPTools serves GET /v1/mcp/tools: the service's operations as a
// tool catalog over plain HTTP (not an MCP transport).
func handleMCPTools(d Deps) http.HandlerFunc {
	// The catalog is derived from the embedded document once.
	catalog := sync.OnceValues(func() ([]Tool, error) {
		doc, err := openAPIDocument()
		if err != nil {
			return nil, err
		}
		return toolCatalog(doc), nil
	})
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := singleParams(w, r, nil); !ok {
			return
		}
		tools, err := catalog()
		if err != nil {
			writeProblem(w, r, http.StatusInternalServerError, "the OpenAPI document does not load: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"tools": tools, "count": len(tools)})
	}
}
