package reference

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// TestSamplesFaithfulToSharedVectors checks every served sample against
// the shared vector file it names: same input bytes, same expected decode.
// A sample edited by hand, or a vector file that changed, fails here.
func TestSamplesFaithfulToSharedVectors(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	load := func(name string) map[string]map[string]any {
		b, err := os.ReadFile(testshared.Path(t, "vectors", name))
		if err != nil {
			t.Fatal(err)
		}
		var raw any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		list, ok := raw.([]any)
		if !ok {
			list = raw.(map[string]any)["vectors"].([]any)
		}
		out := map[string]map[string]any{}
		for _, v := range list {
			m := v.(map[string]any)
			out[m["id"].(string)] = m
		}
		return out
	}
	files := map[string]map[string]map[string]any{
		"adsb": load("adsb.json"), "remoteid": load("remoteid.json"), "mavlink": load("mavlink.json"),
	}
	counts := map[string]int{}
	for _, s := range samples {
		proto, id, _ := strings.Cut(s.ID, "/")
		v, ok := files[proto][id]
		if !ok || proto != s.Protocol {
			t.Errorf("%s: no vector %q in shared/vectors/%s.json", s.ID, id, proto)
			continue
		}
		for k, in := range s.Input {
			if !reflect.DeepEqual(v[k], in) {
				t.Errorf("%s: input %s = %v, vector has %v", s.ID, k, in, v[k])
			}
		}
		var exp any
		if len(s.Expect) > 0 {
			_ = json.Unmarshal(s.Expect, &exp)
		}
		if !reflect.DeepEqual(exp, v["expect"]) {
			t.Errorf("%s: expect differs from the shared vector", s.ID)
		}
		if !strings.Contains(s.Source, "shared/vectors/"+proto+".json#"+id) {
			t.Errorf("%s: source %q does not name its vector", s.ID, s.Source)
		}
		counts[proto]++
	}
	t.Logf("samples checked against shared vectors: %v", counts)
}
