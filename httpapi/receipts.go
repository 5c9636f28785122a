package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/cuasd/cuasd/ledger"
)

// ReceiptLedger is what the HTTP layer needs of the ledger; *ledger.Log
// implements it. The gate's evaluate handler calls Append; the receipt
// endpoints use the rest.
type ReceiptLedger interface {
	// Append signs and durably stores a decision record, returning its receipt.
	Append(ctx context.Context, subject, predicateType string, record json.RawMessage) (ledger.Receipt, error)
	// Entries lists up to limit entries from index from, with the checkpoint
	// they were read under.
	Entries(ctx context.Context, from uint64, limit int) ([]ledger.Entry, ledger.Checkpoint, error)
	// Receipt is the entry at index with its inclusion proof against the
	// current checkpoint.
	Receipt(ctx context.Context, index uint64) (ledger.Receipt, error)
	// ConsistencyProof proves the tree of first leaves a prefix of the tree
	// of second leaves.
	ConsistencyProof(first, second uint64) ([][]byte, error)
	// RootAt is the root hash of the tree of size leaves.
	RootAt(size uint64) ([]byte, error)
	// Checkpoint is the signed checkpoint of the current tree.
	Checkpoint() ledger.Checkpoint
	// Keys lists the log's public keys with their validity.
	Keys() []ledger.KeyInfo
	// SigningMode is "ed25519" or "unsigned".
	SigningMode() string
}

// Limits of the receipt endpoints.
const (
	// emitMaxBody bounds POST /v1/receipt/emit: the payload object may be
	// up to ledger.MaxRecordBytes in compact form, plus room for
	// whitespace, subject and payload_type.
	emitMaxBody = 2*ledger.MaxRecordBytes + 8<<10
	// ledgerDefaultLimit and ledgerMaxLimit page GET /v1/receipt/ledger.
	ledgerDefaultLimit = 100
	ledgerMaxLimit     = 1000
)

// emitRequest is the body of POST /v1/receipt/emit.
type emitRequest struct {
	Subject     *string         `json:"subject"`
	Payload     json.RawMessage `json:"payload"`
	PayloadType *string         `json:"payload_type"`
}

// ledgerPage is the body of GET /v1/receipt/ledger.
type ledgerPage struct {
	TreeSize   uint64         `json:"tree_size"`
	RootHash   string         `json:"root_hash"`
	Checkpoint string         `json:"checkpoint"`
	Entries    []ledger.Entry `json:"entries"`
	// Next is the from of the next page, absent on the last page.
	Next *uint64 `json:"next,omitempty"`
}

// consistencyAnswer is the body of GET /v1/receipt/proof/consistency.
type consistencyAnswer struct {
	First      uint64   `json:"first"`
	Second     uint64   `json:"second"`
	FirstRoot  string   `json:"first_root"`
	SecondRoot string   `json:"second_root"`
	Proof      []string `json:"proof"`
}

// checkpointAnswer is the JSON body of GET /v1/receipt/checkpoint.
type checkpointAnswer struct {
	Origin      string `json:"origin"`
	TreeSize    uint64 `json:"tree_size"`
	RootHash    string `json:"root_hash"`
	Checkpoint  string `json:"checkpoint"`
	SigningMode string `json:"signing_mode"`
}

// keysAnswer is the body of GET /v1/receipt/keys.
type keysAnswer struct {
	SigningMode string           `json:"signing_mode"`
	Keys        []ledger.KeyInfo `json:"keys"`
}

// ledgerProblem maps a ledger error to its answer.
func ledgerProblem(w http.ResponseWriter, r *http.Request, err error, field string) {
	switch ledger.KindOf(err) {
	case ledger.KindInvalid:
		if field != "" {
			writeProblem(w, r, http.StatusBadRequest, err.Error(), FieldError{Field: field, Message: err.Error()})
			return
		}
		writeProblem(w, r, http.StatusBadRequest, err.Error())
	case ledger.KindTooLarge:
		writeProblem(w, r, http.StatusRequestEntityTooLarge, err.Error(), FieldError{Field: "payload", Message: "larger than 64 KiB of compact JSON"})
	case ledger.KindNotFound:
		writeProblem(w, r, http.StatusNotFound, err.Error())
	default:
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			unavailable(w, r, "the ledger (request ended before the entry was stored)")
			return
		}
		// Storage trouble: the entry is not acknowledged and the caller may
		// retry. The detail is the ledger's own, which names no secrets.
		w.Header().Set("Retry-After", "5")
		writeProblem(w, r, http.StatusServiceUnavailable, "the ledger could not serve this: "+err.Error())
	}
}

// handleReceiptEmit serves POST /v1/receipt/emit: sign the payload as an
// in-toto statement, store it durably, answer 201 with the bundle.
func handleReceiptEmit(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Ledger == nil {
			unavailable(w, r, "the receipt ledger")
			return
		}
		var req emitRequest
		if !decodeJSON(w, r, &req, emitMaxBody) {
			return
		}
		pt, errs := req.check()
		if len(errs) > 0 {
			writeFieldProblems(w, r, http.StatusBadRequest, errs)
			return
		}
		rec, err := d.Ledger.Append(r.Context(), *req.Subject, pt, req.Payload)
		if err != nil {
			field := ""
			if ledger.KindOf(err) == ledger.KindInvalid {
				field = "payload"
				if strings.Contains(err.Error(), "subject") {
					field = "subject"
				}
			}
			ledgerProblem(w, r, err, field)
			return
		}
		w.Header().Set("Location", strings.TrimSuffix(r.URL.Path, "/emit")+"/"+strconv.FormatUint(rec.Index, 10))
		writeJSON(w, http.StatusCreated, rec)
	}
}

// check returns the predicate type to record (the default receipt type
// unless payload_type names one) and every invalid field.
func (req *emitRequest) check() (predicateType string, errs []FieldError) {
	if req.Subject == nil || *req.Subject == "" {
		errs = append(errs, FieldError{Field: "subject", Message: "required: a non-empty string naming what the receipt is about"})
	}
	if p := strings.TrimSpace(string(req.Payload)); p == "" || p == "null" {
		errs = append(errs, FieldError{Field: "payload", Message: "required: a JSON object"})
	} else if p[0] != '{' {
		errs = append(errs, FieldError{Field: "payload", Message: "must be a JSON object"})
	}
	pt := ledger.PredicateTypeReceipt
	if req.PayloadType != nil {
		pt = *req.PayloadType
		if u, err := url.Parse(pt); err != nil || u.Scheme == "" || strings.ContainsAny(pt, " \t\r\n") {
			errs = append(errs, FieldError{Field: "payload_type", Message: "must be an absolute URI (the in-toto predicateType)"})
		}
	}
	return pt, errs
}

// handleReceiptLedger serves GET /v1/receipt/ledger?from=&limit=.
func handleReceiptLedger(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, ok := receiptQuery(w, r, d, "from", "limit")
		if !ok {
			return
		}
		from, ok := uintParam(w, r, q, "from", 0, false)
		if !ok {
			return
		}
		limit, ok := uintParam(w, r, q, "limit", ledgerDefaultLimit, false)
		if !ok {
			return
		}
		if limit < 1 || limit > ledgerMaxLimit {
			writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("limit must be between 1 and %d", ledgerMaxLimit),
				FieldError{Field: "limit", Message: fmt.Sprintf("between 1 and %d", ledgerMaxLimit)})
			return
		}
		es, cp, err := d.Ledger.Entries(r.Context(), from, int(limit))
		if err != nil {
			ledgerProblem(w, r, err, "")
			return
		}
		page := ledgerPage{
			TreeSize:   cp.Size,
			RootHash:   hex.EncodeToString(cp.Root),
			Checkpoint: cp.Text,
			Entries:    es,
		}
		if page.Entries == nil {
			page.Entries = []ledger.Entry{}
		}
		if n := from + uint64(len(es)); len(es) > 0 && n < cp.Size {
			page.Next = &n
		}
		writeJSON(w, http.StatusOK, page)
	}
}

// handleReceiptGet serves GET /v1/receipt/{index}: the entry as a bundle
// proven against the current checkpoint.
func handleReceiptGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := receiptQuery(w, r, d); !ok {
			return
		}
		s := chi.URLParam(r, "index")
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("index %q is not a non-negative integer", s),
				FieldError{Field: "index", Message: "a non-negative integer"})
			return
		}
		rec, err := d.Ledger.Receipt(r.Context(), idx)
		if err != nil {
			ledgerProblem(w, r, err, "index")
			return
		}
		writeJSON(w, http.StatusOK, rec)
	}
}

// handleReceiptConsistency serves GET /v1/receipt/proof/consistency.
func handleReceiptConsistency(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, ok := receiptQuery(w, r, d, "first", "second")
		if !ok {
			return
		}
		first, ok := uintParam(w, r, q, "first", 0, true)
		if !ok {
			return
		}
		second, ok := uintParam(w, r, q, "second", d.Ledger.Checkpoint().Size, false)
		if !ok {
			return
		}
		if first > second {
			writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("first (%d) must not be larger than second (%d)", first, second),
				FieldError{Field: "first", Message: "must be <= second"})
			return
		}
		p, err := d.Ledger.ConsistencyProof(first, second)
		if err != nil {
			ledgerProblem(w, r, err, "second")
			return
		}
		r1, err := d.Ledger.RootAt(first)
		if err != nil {
			ledgerProblem(w, r, err, "first")
			return
		}
		r2, err := d.Ledger.RootAt(second)
		if err != nil {
			ledgerProblem(w, r, err, "second")
			return
		}
		ans := consistencyAnswer{First: first, Second: second,
			FirstRoot: hex.EncodeToString(r1), SecondRoot: hex.EncodeToString(r2), Proof: make([]string, len(p))}
		for i, h := range p {
			ans.Proof[i] = hex.EncodeToString(h)
		}
		writeJSON(w, http.StatusOK, ans)
	}
}

// handleReceiptCheckpoint serves GET /v1/receipt/checkpoint: JSON, or the
// bare signed note when the client prefers text/plain (what C2SP tooling
// and `cuasd verify --checkpoint` read).
func handleReceiptCheckpoint(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := receiptQuery(w, r, d); !ok {
			return
		}
		cp := d.Ledger.Checkpoint()
		if prefersText(r.Header.Get("Accept")) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(cp.Text))
			return
		}
		writeJSON(w, http.StatusOK, checkpointAnswer{
			Origin:      cp.Origin,
			TreeSize:    cp.Size,
			RootHash:    hex.EncodeToString(cp.Root),
			Checkpoint:  cp.Text,
			SigningMode: d.Ledger.SigningMode(),
		})
	}
}

// handleReceiptKeys serves GET /v1/receipt/keys.
func handleReceiptKeys(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := receiptQuery(w, r, d); !ok {
			return
		}
		keys := d.Ledger.Keys()
		if keys == nil {
			keys = []ledger.KeyInfo{}
		}
		writeJSON(w, http.StatusOK, keysAnswer{SigningMode: d.Ledger.SigningMode(), Keys: keys})
	}
}

// receiptQuery begins every receipt read: 503 when no ledger is wired, then
// 400 unless the query names only the allowed parameters, each at most once.
func receiptQuery(w http.ResponseWriter, r *http.Request, d Deps, allowed ...string) (url.Values, bool) {
	if d.Ledger == nil {
		unavailable(w, r, "the receipt ledger")
		return nil, false
	}
	q := newQuery(r, allowed...)
	if q.failed(w) {
		return nil, false
	}
	return q.vals, true
}

// uintParam reads a non-negative integer query parameter.
func uintParam(w http.ResponseWriter, r *http.Request, q url.Values, name string, def uint64, required bool) (uint64, bool) {
	s, present := q[name]
	if !present {
		if required {
			writeProblem(w, r, http.StatusBadRequest, "the query parameter "+name+" is required",
				FieldError{Field: name, Message: "required: a non-negative integer"})
			return 0, false
		}
		return def, true
	}
	v, err := strconv.ParseUint(s[0], 10, 64)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("%s %q is not a non-negative integer", name, s[0]),
			FieldError{Field: name, Message: "a non-negative integer"})
		return 0, false
	}
	return v, true
}

// prefersText reports whether an Accept header asks for text/plain over
// JSON.
func prefersText(accept string) bool {
	if accept == "" {
		return false
	}
	best, bestQ := "", -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil {
				q = f
			}
		}
		if (mt == "text/plain" || mt == "application/json") && q > bestQ {
			best, bestQ = mt, q
		}
	}
	return best == "text/plain"
}
