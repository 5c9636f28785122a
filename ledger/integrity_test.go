package ledger_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/ledger"
)

// TestDeletedLedgerIsReportedNeverRecreated: an admin connection deleting
// the ledger's stream used to go unnoticed, and the next start created an
// empty ledger in its place (issue 23, item 1). Now CheckStore reports the
// loss, appends fail, and Open refuses the emptied stream.
func TestDeletedLedgerIsReportedNeverRecreated(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	js, stopNATS := ledger.StartNATS(t, filepath.Join(dir, "js"))
	defer stopNATS()
	opts := ledger.Options{DataDir: dir, Logger: quiet, Instance: "test", Unsigned: true}
	l, err := ledger.Open(ctx, js, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := l.Append(ctx, "s", "https://example.com/p", record(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.CheckStore(ctx); err != nil {
		t.Fatalf("intact ledger: %v", err)
	}
	stream, _ := ledger.StreamFor("test")
	if b, err := os.ReadFile(filepath.Join(dir, "ledger-"+stream+".batches")); err != nil || strings.TrimSpace(string(b)) == "0" {
		t.Fatalf("marker: %q %v", b, err)
	}
	if err := js.DeleteStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	err = l.CheckStore(ctx)
	if !errors.Is(err, ledger.ErrIntegrity) || !strings.Contains(err.Error(), stream+" is missing") {
		t.Fatalf("after deletion: %v, want an integrity error naming %s", err, stream)
	}
	if _, err := l.Append(ctx, "s", "https://example.com/p", record(9)); err == nil {
		t.Error("an append succeeded with the ledger stream deleted")
	}
	if _, err := js.Stream(ctx, stream); err == nil {
		t.Error("the ledger stream was recreated")
	}
	l.Close()
	_, err = ledger.Open(ctx, js, opts)
	if !errors.Is(err, ledger.ErrIntegrity) || !strings.Contains(err.Error(), "holds 0 batches") {
		t.Fatalf("reopen over an emptied stream: %v, want an integrity error", err)
	}
}
