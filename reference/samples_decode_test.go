package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// TestSamplesDecode re-decodes every served sample with the real decoder of
// its protocol and compares the result with every value the sample states:
// its expected decode, and for MAVLink what the reference C parser did.
// A sample no checker handles, or an expected key no checker compares,
// fails the test, so a new or edited sample cannot go unverified.
//
// Numbers without a tolerance in the sample are compared exactly, except
// the few ADS-B values that the sources print rounded (see adsbNum).
func TestSamplesDecode(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	checkers := map[string]func(*testing.T, *sampleCheck){
		"adsb":     checkADSBSample,
		"remoteid": checkRemoteIDSample,
		"mavlink":  checkMAVLinkSample,
	}
	passed := map[string]int{}
	total := map[string]int{}
	for _, s := range samples {
		total[s.Protocol]++
		ok := t.Run(s.ID, func(t *testing.T) {
			check, found := checkers[s.Protocol]
			if !found {
				t.Fatalf("no re-decode for protocol %q", s.Protocol)
			}
			c := newSampleCheck(t, s)
			check(t, c)
			c.leftover(t)
		})
		if ok {
			passed[s.Protocol]++
		}
	}
	// The counts the design note and the issue state: a sample dropped from
	// (or added to) the file must be a deliberate change here too.
	want := map[string]int{"adsb": 16, "remoteid": 14, "mavlink": 12}
	for p, n := range want {
		if total[p] != n {
			t.Errorf("%s: %d samples, want %d", p, total[p], n)
		}
	}
	t.Logf("samples re-decoded and matching (of total): adsb %d/%d, remoteid %d/%d, mavlink %d/%d",
		passed["adsb"], total["adsb"], passed["remoteid"], total["remoteid"], passed["mavlink"], total["mavlink"])
}

// sampleCheck is one sample with its expected decode parsed so that every
// number keeps its printed form (json.Number), plus the set of expected keys
// a checker has compared.
type sampleCheck struct {
	s      Sample
	expect map[string]any // nil when the sample expects no decode
	null   bool           // expect is JSON null
	used   map[string]bool
}

func newSampleCheck(t *testing.T, s Sample) *sampleCheck {
	t.Helper()
	c := &sampleCheck{s: s, used: map[string]bool{}}
	if len(s.Expect) == 0 || string(s.Expect) == "null" {
		c.null = true
		return c
	}
	if err := decodeNumbers(s.Expect, &c.expect); err != nil {
		t.Fatalf("expect: %v", err)
	}
	return c
}

// exp returns an expected value and marks the key compared.
func (c *sampleCheck) exp(k string) (any, bool) {
	x, ok := c.expect[k]
	if ok {
		c.used[k] = true
	}
	return x, ok
}

// leftover fails for every expected key that no comparison used.
func (c *sampleCheck) leftover(t *testing.T) {
	t.Helper()
	var left []string
	for k := range c.expect {
		if !c.used[k] {
			left = append(left, k)
		}
	}
	slices.Sort(left)
	if len(left) > 0 {
		t.Errorf("expected keys not compared with the decode: %v", left)
	}
}

// reference returns the sample's reference_behaviour with numbers kept
// printed, or nil.
func (c *sampleCheck) reference(t *testing.T) map[string]any {
	t.Helper()
	if len(c.s.Reference) == 0 {
		return nil
	}
	var m map[string]any
	if err := decodeNumbers(c.s.Reference, &m); err != nil {
		t.Fatalf("reference_behaviour: %v", err)
	}
	return m
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// asJSON marshals a decoder's JSON view and reads it back the way the
// expected values are read, so both sides are compared as JSON values: what
// the endpoint serves is what is checked.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal decode: %v", err)
	}
	var out any
	if err := decodeNumbers(b, &out); err != nil {
		t.Fatalf("re-read decode: %v", err)
	}
	return out
}

// jsonDiff compares a decoded JSON value with an expected one and returns
// the differences, each naming its path. Every key of an expected object
// must be present in the decoded object with an equal value; with
// exactKeys the decoded object may not have others. Numbers are equal when
// both are the same integer, or, for decimals, the same float64 (the
// reference printed a float; the decoder computed one).
func jsonDiff(path string, got, want any, exactKeys bool) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var d []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				d = append(d, fmt.Sprintf("%s.%s: missing from the decode (want %v)", path, k, w[k]))
				continue
			}
			d = append(d, jsonDiff(path+"."+k, gv, w[k], exactKeys)...)
		}
		if exactKeys {
			for k, gv := range g {
				if _, ok := w[k]; !ok {
					d = append(d, fmt.Sprintf("%s.%s: decoded (%v) but not in the sample", path, k, gv))
				}
			}
		}
		return d
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var d []string
		for i := range w {
			d = append(d, jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], exactKeys)...)
		}
		return d
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(g, w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		return nil
	default: // string, bool, nil
		if got != want {
			return []string{fmt.Sprintf("%s: got %#v, want %#v", path, got, want)}
		}
		return nil
	}
}

// sameNumber compares two JSON numbers: integers exactly (they may exceed
// 2^53), anything else as float64.
func sameNumber(a, b json.Number) bool {
	ai, aok := new(big.Int).SetString(string(a), 10)
	bi, bok := new(big.Int).SetString(string(b), 10)
	if aok && bok {
		return ai.Cmp(bi) == 0
	}
	af, err1 := a.Float64()
	bf, err2 := b.Float64()
	return err1 == nil && err2 == nil && af == bf
}

// number returns an expected JSON number as float64.
func number(t *testing.T, key string, x any) float64 {
	t.Helper()
	n, ok := x.(json.Number)
	if !ok {
		t.Fatalf("%s: %v is not a number", key, x)
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) {
		t.Fatalf("%s: %v", key, err)
	}
	return f
}

// halfLastDigit is half a unit in the last printed decimal of x: a value
// printed rounded to that decimal agrees with any value within it.
func halfLastDigit(x json.Number) float64 {
	s := strings.TrimLeft(string(x), "-")
	if strings.ContainsAny(s, "eE") {
		return 0
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return 0.5 * math.Pow(10, -float64(len(s)-i-1))
	}
	return 0.5
}

// TestSampleReferencesFaithful extends TestSamplesFaithfulToSharedVectors to
// what TestSamplesDecode also compares with: each sample's
// reference_behaviour must be the shared vector's (MAVLink: its c_parser
// block; Remote ID: its library_* keys), and a Remote ID sample's kind the
// vector's kind.
func TestSampleReferencesFaithful(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string, v any) {
		b, err := os.ReadFile(testshared.Path(t, "vectors", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var mav []map[string]any
	var rid struct {
		Vectors []map[string]any `json:"vectors"`
	}
	read("mavlink.json", &mav)
	read("remoteid.json", &rid)
	byID := func(list []map[string]any) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, v := range list {
			m[fmt.Sprint(v["id"])] = v
		}
		return m
	}
	vectors := map[string]map[string]map[string]any{"mavlink": byID(mav), "remoteid": byID(rid.Vectors)}
	n := 0
	for _, s := range samples {
		proto, id, _ := strings.Cut(s.ID, "/")
		var got any
		if len(s.Reference) > 0 {
			if err := json.Unmarshal(s.Reference, &got); err != nil {
				t.Fatalf("%s: %v", s.ID, err)
			}
		}
		want := map[string]any{}
		switch proto {
		case "mavlink":
			want["c_parser"] = vectors[proto][id]["c_parser"]
		case "remoteid":
			v := vectors[proto][id]
			for k, x := range v {
				if strings.HasPrefix(k, "library_") {
					want[k] = x
				}
			}
			if v["kind"] != s.Kind {
				t.Errorf("%s: kind %q, vector has %v", s.ID, s.Kind, v["kind"])
			}
		default:
			if got != nil {
				t.Errorf("%s: reference_behaviour %v, the vector file has none", s.ID, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, any(want)) {
			t.Errorf("%s: reference_behaviour differs from the shared vector", s.ID)
		}
		n++
	}
	t.Logf("reference behaviours checked against shared vectors: %d", n)
}
