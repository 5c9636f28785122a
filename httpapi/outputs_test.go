package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/cuasd/cuasd/output"
)

func TestOutputs(t *testing.T) {
	at := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	h := newTestServer(t, Deps{Outputs: func() []output.SinkStatus {
		return []output.SinkStatus{
			{Name: "cot-udp 239.2.3.1:6969", Kind: "cot-udp", Target: "239.2.3.1:6969", Connected: true, Sent: 12},
			{Name: "tak-server ssl://tak:8089", Kind: "tak-server", Target: "ssl://tak:8089", LastError: "connection refused", LastErrorAt: &at, Dropped: 3},
		}
	}})
	rec := do(t, h, "GET", testBase+"/v1/outputs", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var got struct {
		Outputs []output.SinkStatus `json:"outputs"`
		Count   int                 `json:"count"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Count != 2 || got.Outputs[1].LastError != "connection refused" || got.Outputs[1].Dropped != 3 || got.Outputs[0].Sent != 12 {
		t.Fatalf("%+v", got)
	}
}

func TestOutputsNotWired(t *testing.T) {
	rec := do(t, newTestServer(t, Deps{}), "GET", testBase+"/v1/outputs", nil)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
