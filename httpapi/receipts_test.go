package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/ledger"
)

// newTestLedger opens a ledger on an embedded JetStream server in a temp
// directory.
func newTestLedger(t *testing.T, unsigned bool) *ledger.Log {
	t.Helper()
	dir := t.TempDir()
	js := natstest.Start(t, natstest.InDir(filepath.Join(dir, "js")), natstest.SyncAlways()).JS
	l, err := ledger.Open(context.Background(), js, ledger.Options{Instance: "httptest", DataDir: dir, Unsigned: unsigned,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

const receiptBase = testBase + "/v1/receipt"

func TestReceiptEmit(t *testing.T) {
	l := newTestLedger(t, false)
	h := newTestServer(t, Deps{Ledger: l, SigningMode: l.SigningMode()})
	big := `{"x":"` + strings.Repeat("a", 70_000) + `"}`
	tests := []struct {
		name   string
		body   any
		ctype  string // "" means application/json
		status int
		field  string // the field a 400 must name
	}{
		{"minimal", `{"subject":"track-1","payload":{"decision":"monitor"}}`, "", 201, ""},
		{"with payload type", `{"subject":"t","payload":{"a":[1,2]},"payload_type":"https://example.org/p/v1"}`, "", 201, ""},
		{"payload with whitespace and html", "{\"subject\":\"t\",\"payload\":{ \"h\" : \"<b>&\" }}", "", 201, ""},
		{"not json content type", `{"subject":"t","payload":{}}`, "text/plain", 415, ""},
		{"malformed", `{"subject":"t","payload":{`, "", 400, ""},
		{"unknown field", `{"subject":"t","payload":{},"extra":1}`, "", 400, "extra"},
		{"missing subject", `{"payload":{}}`, "", 400, "subject"},
		{"empty subject", `{"subject":"","payload":{}}`, "", 400, "subject"},
		{"subject not a string", `{"subject":7,"payload":{}}`, "", 400, "subject"},
		{"missing payload", `{"subject":"t"}`, "", 400, "payload"},
		{"null payload", `{"subject":"t","payload":null}`, "", 400, "payload"},
		{"array payload", `{"subject":"t","payload":[1]}`, "", 400, "payload"},
		{"string payload", `{"subject":"t","payload":"x"}`, "", 400, "payload"},
		{"relative payload type", `{"subject":"t","payload":{},"payload_type":"receipt"}`, "", 400, "payload_type"},
		{"long subject", `{"subject":"` + strings.Repeat("s", 1025) + `","payload":{}}`, "", 400, "subject"},
		{"payload over 64 KiB", `{"subject":"t","payload":` + big + `}`, "", 413, ""},
		{"body over the limit", `{"subject":"t","payload":{"x":"` + strings.Repeat("a", 200_000) + `"}}`, "", 413, ""},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, receiptBase+"/emit", strings.NewReader(tt.body.(string)))
			ct := tt.ctype
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkOpenAPI(t, req, rec)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.field != "" {
				var p Problem
				_ = json.Unmarshal(rec.Body.Bytes(), &p)
				if len(p.Errors) == 0 || p.Errors[0].Field != tt.field {
					t.Errorf("problem %+v does not name field %q", p, tt.field)
				}
			}
			if rec.Code != 201 {
				return
			}
			created++
			var r ledger.Receipt
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if got, want := rec.Header().Get("Location"), receiptBase+"/"+strconv.FormatUint(r.Index, 10); got != want {
				t.Errorf("Location %q, want %q", got, want)
			}
			if _, err := ledger.VerifyReceipt(&r, ledger.VerifyOptions{PublicKey: l.PublicKey()}); err != nil {
				t.Errorf("the 201 bundle does not verify: %v", err)
			}
		})
	}
	// Nothing was half-written by the rejected requests.
	if cp := l.Checkpoint(); cp.Size != uint64(created) {
		t.Errorf("tree size %d after %d accepted emits", cp.Size, created)
	}
}

func emitN(t *testing.T, h http.Handler, n int) {
	t.Helper()
	for i := range n {
		rec := do(t, h, http.MethodPost, receiptBase+"/emit", map[string]any{"subject": "s" + strconv.Itoa(i), "payload": map[string]int{"i": i}})
		if rec.Code != 201 {
			t.Fatalf("emit: %d %s", rec.Code, rec.Body)
		}
	}
}

func TestReceiptLedgerPages(t *testing.T) {
	l := newTestLedger(t, false)
	h := newTestServer(t, Deps{Ledger: l})
	emitN(t, h, 5)
	tests := []struct {
		query  string
		status int
		n      int
		next   *uint64
	}{
		{"", 200, 5, nil},
		{"?limit=2", 200, 2, receiptU64(2)},
		{"?from=2&limit=2", 200, 2, receiptU64(4)},
		{"?from=4", 200, 1, nil},
		{"?from=5", 200, 0, nil},
		{"?from=99", 200, 0, nil},
		{"?limit=1000", 200, 5, nil},
		{"?limit=0", 400, 0, nil},
		{"?limit=1001", 400, 0, nil},
		{"?from=-1", 400, 0, nil},
		{"?from=abc", 400, 0, nil},
		{"?from=1&from=2", 400, 0, nil},
		{"?offset=1", 400, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := do(t, h, http.MethodGet, receiptBase+"/ledger"+tt.query, nil)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if rec.Code != 200 {
				return
			}
			var p ledgerPage
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Entries) != tt.n || p.TreeSize != 5 {
				t.Errorf("%d entries at size %d, want %d at 5", len(p.Entries), p.TreeSize, tt.n)
			}
			if (p.Next == nil) != (tt.next == nil) || (p.Next != nil && *p.Next != *tt.next) {
				t.Errorf("next %v, want %v", p.Next, tt.next)
			}
			cp := l.Checkpoint()
			if p.Checkpoint != cp.Text || p.RootHash != hex.EncodeToString(cp.Root) {
				t.Error("page checkpoint differs from the ledger's")
			}
		})
	}
}

func TestReceiptGetAndConsistency(t *testing.T) {
	l := newTestLedger(t, false)
	h := newTestServer(t, Deps{Ledger: l})
	emitN(t, h, 7)
	for i := range 7 {
		rec := do(t, h, http.MethodGet, receiptBase+"/"+strconv.Itoa(i), nil)
		if rec.Code != 200 {
			t.Fatalf("GET %d: %d %s", i, rec.Code, rec.Body)
		}
		var r ledger.Receipt
		_ = json.Unmarshal(rec.Body.Bytes(), &r)
		if r.Index != uint64(i) || r.TreeSize != 7 {
			t.Errorf("GET %d: index %d size %d", i, r.Index, r.TreeSize)
		}
		if _, err := ledger.VerifyReceipt(&r, ledger.VerifyOptions{PublicKey: l.PublicKey()}); err != nil {
			t.Errorf("GET %d: %v", i, err)
		}
	}
	for path, status := range map[string]int{
		"/7": 404, "/99999999999": 404, "/abc": 400, "/-1": 400, "/0?x=1": 400,
	} {
		t.Run(path, func(t *testing.T) {
			if rec := do(t, h, http.MethodGet, receiptBase+path, nil); rec.Code != status {
				t.Errorf("GET %s: %d, want %d", path, rec.Code, status)
			}
		})
	}

	for _, q := range []struct {
		query         string
		first, second uint64
	}{{"first=3&second=7", 3, 7}, {"first=1", 1, 7}, {"first=0&second=5", 0, 5}, {"first=4&second=4", 4, 4}} {
		t.Run(q.query, func(t *testing.T) {
			rec := do(t, h, http.MethodGet, receiptBase+"/proof/consistency?"+q.query, nil)
			if rec.Code != 200 {
				t.Fatalf("%s: %d %s", q.query, rec.Code, rec.Body)
			}
			var a consistencyAnswer
			_ = json.Unmarshal(rec.Body.Bytes(), &a)
			r1, _ := l.RootAt(q.first)
			r2, _ := l.RootAt(q.second)
			p, err := ledger.DecodeHashes(a.Proof)
			if err != nil {
				t.Fatal(err)
			}
			if a.First != q.first || a.Second != q.second {
				t.Errorf("%s: answered %d..%d", q.query, a.First, a.Second)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, q.first, q.second, p, r1, r2); err != nil {
				t.Errorf("%s: %v", q.query, err)
			}
		})
	}
	for query, status := range map[string]int{
		"": 400, "first=x": 400, "first=5&second=3": 400, "first=1&second=8": 404, "first=1&bogus=2": 400,
	} {
		t.Run(query, func(t *testing.T) {
			if rec := do(t, h, http.MethodGet, receiptBase+"/proof/consistency?"+query, nil); rec.Code != status {
				t.Errorf("consistency?%s: %d, want %d: %s", query, rec.Code, status, rec.Body)
			}
		})
	}
}

func TestReceiptCheckpointAndKeys(t *testing.T) {
	l := newTestLedger(t, false)
	h := newTestServer(t, Deps{Ledger: l})
	emitN(t, h, 3)

	rec := do(t, h, http.MethodGet, receiptBase+"/checkpoint", nil)
	var cp checkpointAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &cp); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	want := l.Checkpoint()
	if cp.TreeSize != 3 || cp.Origin != "cuasd/httptest" || cp.Checkpoint != want.Text || cp.SigningMode != "ed25519" {
		t.Errorf("checkpoint answer %+v", cp)
	}

	req := httptest.NewRequest(http.MethodGet, receiptBase+"/checkpoint", nil)
	req.Header.Set("Accept", "text/plain, application/json;q=0.5")
	trec := httptest.NewRecorder()
	h.ServeHTTP(trec, req)
	checkOpenAPI(t, req, trec)
	if trec.Code != 200 || trec.Body.String() != want.Text || !strings.HasPrefix(trec.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("text checkpoint: %d %q %q", trec.Code, trec.Header().Get("Content-Type"), trec.Body)
	}

	rec = do(t, h, http.MethodGet, receiptBase+"/keys", nil)
	var ka keysAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &ka); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if ka.SigningMode != "ed25519" || len(ka.Keys) != 1 || !ka.Keys[0].Current || ka.Keys[0].KeyID != ledger.KeyID(l.PublicKey()) {
		t.Fatalf("keys %+v", ka)
	}
	pub, err := ledger.ParsePublicKeyPEM([]byte(ka.Keys[0].PublicKeyPEM))
	if err != nil || !pub.Equal(l.PublicKey()) {
		t.Errorf("served public key: %v", err)
	}
	if strings.Contains(rec.Body.String(), "PRIVATE") {
		t.Error("the keys answer mentions a private key")
	}
	if *ka.Keys[0].FirstIndex != 0 || *ka.Keys[0].LastIndex != 2 {
		t.Errorf("key covers %d..%d, want 0..2", *ka.Keys[0].FirstIndex, *ka.Keys[0].LastIndex)
	}
}

func TestReceiptUnsignedMode(t *testing.T) {
	l := newTestLedger(t, true)
	h := newTestServer(t, Deps{Ledger: l, SigningMode: l.SigningMode()})
	rec := do(t, h, http.MethodPost, receiptBase+"/emit", `{"subject":"t","payload":{}}`)
	if rec.Code != 201 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var r ledger.Receipt
	_ = json.Unmarshal(rec.Body.Bytes(), &r)
	if r.Envelope.Signatures[0].KeyID != ledger.UnsignedKeyID || r.Envelope.Signatures[0].Sig != "" {
		t.Errorf("unsigned envelope %+v", r.Envelope.Signatures)
	}
	rec = do(t, h, http.MethodGet, receiptBase+"/keys", nil)
	if !strings.Contains(rec.Body.String(), `"signing_mode":"unsigned"`) || !strings.Contains(rec.Body.String(), `"keys":[]`) {
		t.Errorf("keys in unsigned mode: %s", rec.Body)
	}
	rec = do(t, h, http.MethodGet, testBase+"/v1/honest", nil)
	if !strings.Contains(rec.Body.String(), "placeholder") {
		t.Errorf("/v1/honest does not say the signature is a placeholder: %s", rec.Body)
	}
}

func TestReceiptEndpointsWithoutLedger(t *testing.T) {
	h := newTestServer(t, Deps{})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/emit", `{"subject":"t","payload":{}}`},
		{"GET", "/ledger", ""},
		{"GET", "/0", ""},
		{"GET", "/proof/consistency?first=0", ""},
		{"GET", "/checkpoint", ""},
		{"GET", "/keys", ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			if rec := do(t, h, c.method, receiptBase+c.path, body); rec.Code != http.StatusServiceUnavailable {
				t.Errorf("%s %s without a ledger: %d", c.method, c.path, rec.Code)
			}
		})
	}
}

func TestPrefersText(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                   false,
		"text/plain":                         true,
		"application/json":                   false,
		"*/*":                                false,
		"text/plain;q=0.4, application/json": false,
		"application/json;q=0.1, text/plain": true,
	} {
		t.Run(accept, func(t *testing.T) {
			if got := prefersText(accept); got != want {
				t.Errorf("prefersText(%q) = %v, want %v", accept, got, want)
			}
		})
	}
}

func receiptU64(v uint64) *uint64 { return &v }
