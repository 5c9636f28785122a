package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/cuasd/cuasd/ledger"
)

// ReceiptLedger is what the HTTP layer needs of the ledger.
type ReceiptLedger interface {
	// Append signs and durably stores a decision record, returning its receipt.
	Append(ctx context.Context, subject, predicateType string, record json.RawMessage) (ledger.Receipt, error)
}

func handleReceiptEmit(d Deps) http.HandlerFunc        { return notBuilt("receipt emission") }
func handleReceiptLedger(d Deps) http.HandlerFunc      { return notBuilt("the receipt ledger") }
func handleReceiptGet(d Deps) http.HandlerFunc         { return notBuilt("receipt lookup") }
func handleReceiptConsistency(d Deps) http.HandlerFunc { return notBuilt("consistency proofs") }
func handleReceiptCheckpoint(d Deps) http.HandlerFunc  { return notBuilt("ledger checkpoints") }
func handleReceiptKeys(d Deps) http.HandlerFunc        { return notBuilt("receipt keys") }
