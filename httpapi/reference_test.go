package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/reference"
)

func refServer(t *testing.T) http.Handler {
	t.Helper()
	db, err := reference.Default()
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, Deps{Drones: db})
}

func TestDronesList(t *testing.T) {
	h := refServer(t)
	cases := []struct {
		query      string
		status     int
		wantCount  int // -1: any
		wantDetail string
	}{
		{"", 200, 53, ""},
		{"?side=counter-uas", 200, 11, ""},
		{"?side=adversary&group=4", 200, 4, ""},
		{"?country=CN", 200, 8, ""},
		{"?country=china&side=dual-use", 200, 4, ""},
		{"?q=reaper", 200, 1, ""},
		{"?side=friendly", 400, -1, "allied, dual-use, adversary, counter-uas"},
		{"?group=7", 400, -1, "1, 2, 3, 4, 5"},
		{"?telemetry=morse", 400, -1, "remote_id"},
		{"?colour=red", 400, -1, "allowed: side, group"},
		{"?side=allied&side=adversary", 400, -1, "once"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			rec := do(t, h, "GET", testBase+"/v1/drones/database"+tc.query, nil)
			if rec.Code != tc.status {
				t.Errorf("%s: status %d, want %d: %s", tc.query, rec.Code, tc.status, rec.Body)
				return
			}
			if tc.status != 200 {
				if !strings.Contains(rec.Body.String(), tc.wantDetail) {
					t.Errorf("%s: problem %s does not list %q", tc.query, rec.Body, tc.wantDetail)
				}
				return
			}
			var body struct {
				Drones []reference.Drone `json:"drones"`
				Count  int               `json:"count"`
				Total  int               `json:"total"`
				Filter map[string]string `json:"filters"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Count != tc.wantCount || len(body.Drones) != tc.wantCount || body.Total != 53 {
				t.Errorf("%s: count %d (%d drones), total %d; want %d of 53", tc.query, body.Count, len(body.Drones), body.Total, tc.wantCount)
			}
		})
	}
}

func TestDroneGet(t *testing.T) {
	h := refServer(t)
	rec := do(t, h, "GET", testBase+"/v1/drones/general-atomics-mq-9-reaper", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"group":5`) {
		t.Errorf("reaper: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "GET", testBase+"/v1/drones/no-such-drone", nil)
	if rec.Code != 404 || !strings.Contains(rec.Header().Get("Content-Type"), "problem+json") {
		t.Errorf("unknown id: %d %s", rec.Code, rec.Body)
	}
	// Without a catalog the endpoint says so rather than inventing data.
	rec = do(t, newTestServer(t, Deps{}), "GET", testBase+"/v1/drones/database", nil)
	if rec.Code != 503 {
		t.Errorf("nil catalog: %d", rec.Code)
	}
}

func TestResearchAndSamples(t *testing.T) {
	h := refServer(t)
	rec := do(t, h, "GET", testBase+"/v1/research", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "astm-f3411-22a") {
		t.Errorf("research: %d", rec.Code)
	}
	for _, p := range []string{"", "?protocol=adsb", "?protocol=mavlink", "?protocol=remoteid"} {
		t.Run(p, func(t *testing.T) {
			rec := do(t, h, "GET", testBase+"/v1/samples"+p, nil)
			var body struct {
				Samples []reference.Sample `json:"samples"`
				Count   int                `json:"count"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 || body.Count == 0 {
				t.Errorf("samples%s: %d %v", p, rec.Code, err)
			}
			for _, s := range body.Samples {
				if p != "" && "?protocol="+s.Protocol != p {
					t.Errorf("samples%s returned %s", p, s.ID)
				}
			}
		})
	}
	if rec := do(t, h, "GET", testBase+"/v1/samples?protocol=nmea", nil); rec.Code != 400 {
		t.Errorf("unknown protocol: %d", rec.Code)
	}
}

// TestToolCatalogMatchesOpenAPI checks each tool against the OpenAPI
// document independently: the operation exists with that method, and the
// input schema of a body-only operation is its resolved request schema.
func TestToolCatalogMatchesOpenAPI(t *testing.T) {
	h := refServer(t)
	rec := do(t, h, "GET", testBase+"/v1/mcp/tools", nil)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	var body struct {
		Tools []Tool `json:"tools"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	doc, err := openAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	seen := map[string]bool{}
	for _, tool := range body.Tools {
		item, ok := paths[tool.Path].(map[string]any)
		if !ok {
			t.Errorf("%s: path %s not in the document", tool.Name, tool.Path)
			continue
		}
		op, ok := item[strings.ToLower(tool.Method)].(map[string]any)
		if !ok || op["operationId"] != tool.Name {
			t.Errorf("%s: no %s operation with that operationId at %s", tool.Name, tool.Method, tool.Path)
			continue
		}
		seen[tool.Name] = true
		if _, hasParams := op["parameters"]; !hasParams {
			if rb, ok := op["requestBody"].(map[string]any); ok {
				want := resolve(doc, rb, 0).(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
				// Round-trip through JSON so both sides have the same types.
				var got, exp any
				b1, _ := json.Marshal(tool.InputSchema)
				b2, _ := json.Marshal(want)
				_ = json.Unmarshal(b1, &got)
				_ = json.Unmarshal(b2, &exp)
				if !reflect.DeepEqual(got, exp) {
					t.Errorf("%s: input_schema differs from the request body schema", tool.Name)
				}
			}
		}
		if strings.Contains(string(mustJSON(t, tool.InputSchema)), `"$ref"`) {
			t.Errorf("%s: input_schema still has a $ref", tool.Name)
		}
	}
	for _, want := range []string{"listDrones", "getDrone", "listSamples"} {
		if !seen[want] {
			t.Errorf("catalog lacks %s", want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
