package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// stopChild ends a child cuasd as systemctl stop does (SIGTERM) and waits.
func stopChild(t *testing.T, c *child) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = c.cmd.Process.Kill()
		t.Fatal("cuasd did not stop on SIGTERM within 60 s")
	}
}

// treeSize is the size of the log's current checkpoint.
func treeSize(t *testing.T, base string) (uint64, []byte) {
	t.Helper()
	_, body := get(t, base+"/v1/receipt/checkpoint")
	var cp struct {
		TreeSize uint64 `json:"tree_size"`
	}
	if err := json.Unmarshal(body, &cp); err != nil {
		t.Fatalf("checkpoint %s: %v", body, err)
	}
	return cp.TreeSize, body
}

// TestRestoreDrill is docs/OPERATIONS.md's "Backup and restore" drill
// (issue 34: it failed with "trusted checkpoint (size 17) is older than
// the bundle's tree (size 20)", the demo having appended since the
// checkpoint was kept): run, keep a checkpoint, stop, copy the data
// directory, start from the copy, and prove the restore: its tree
// extends the kept checkpoint, and cuasd verify passes for an entry
// against the kept checkpoint with a consistency proof.
func TestRestoreDrill(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir, "--demo")
	var kept []byte
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		n, cp := treeSize(t, c.base)
		if n >= 3 {
			kept = cp
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo recorded fewer than 3 decisions in 60 s")
		}
	}
	stopChild(t, c)
	restored := filepath.Join(t.TempDir(), "restored")
	if err := os.CopyFS(restored, os.DirFS(dir)); err != nil { // the archive and its extraction
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(restored, natsURLFile))
	c = startChild(t, restored, "--demo")
	defer stopChild(t, c)
	var keptCP struct {
		TreeSize uint64 `json:"tree_size"`
	}
	_ = json.Unmarshal(kept, &keptCP)
	work := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// After the restore the log goes on (the demo decides, operators emit):
	// the bundle's tree is newer than the kept checkpoint.
	if resp, body := postJSON(t, c.base+"/v1/receipt/emit", map[string]any{"subject": "after-restore", "payload": map[string]any{"n": 1}}); resp.StatusCode != 201 {
		t.Fatalf("emit after restore: %d %s", resp.StatusCode, body)
	}
	_, bundle := get(t, c.base+"/v1/receipt/1")
	var b struct {
		TreeSize uint64 `json:"tree_size"`
	}
	if err := json.Unmarshal(bundle, &b); err != nil || b.TreeSize <= keptCP.TreeSize {
		t.Fatalf("bundle of the restored log (tree %d, kept %d): %v %s", b.TreeSize, keptCP.TreeSize, err, bundle)
	}
	_, cons := get(t, fmt.Sprintf("%s/v1/receipt/proof/consistency?first=%d&second=%d", c.base, keptCP.TreeSize, b.TreeSize))
	var out bytes.Buffer
	args := []string{"verify", write("bundle.json", bundle), "--pubkey", filepath.Join(restored, "ledger-signing-key.pub.pem"),
		"--checkpoint", write("checkpoint.json", kept), "--consistency", write("consistency.json", cons)}
	if err := run(context.Background(), args, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatalf("cuasd %v: %v\n%s", args, err, out.String())
	}
}

// authed does one request to a cuasd with tokens, with the bearer token.
func authed(t *testing.T, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestKeyRotationDrill is docs/OPERATIONS.md's key rotation, on a cuasd
// with API tokens (issue 34: step 1 got 401 without the token): a new
// Ed25519 key, the announcement signed by the old key, a restart on the
// new key, the completion signed by the new one; /v1/receipt/keys then
// lists both, and each receipt verifies offline with its own key.
func TestKeyRotationDrill(t *testing.T) {
	dir := t.TempDir()
	secret, entry := newOperatorToken(t)
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, entry, 0o600); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, dir, "--auth-tokens", tokens)
	// 1. The new key and its keyid (hex SHA-256 of the PKIX public key).
	pub, priv, _ := ed25519.GenerateKey(nil)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	newKey := filepath.Join(t.TempDir(), "signing-key-2027.pem")
	_ = os.WriteFile(newKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	pkix, _ := x509.MarshalPKIXPublicKey(pub)
	newPub := filepath.Join(t.TempDir(), "signing-key-2027.pub.pem")
	_ = os.WriteFile(newPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}), 0o600)
	sum := sha256.Sum256(pkix)
	newID := hex.EncodeToString(sum[:])
	keys := func() (cur string, all map[string]bool) {
		code, b := authed(t, "GET", c.base+"/v1/receipt/keys", secret, nil)
		var k struct {
			Keys []struct {
				KeyID   string `json:"keyid"`
				Current bool   `json:"current"`
			} `json:"keys"`
		}
		if err := json.Unmarshal(b, &k); err != nil || code != 200 {
			t.Fatalf("GET /v1/receipt/keys: %d %s", code, b)
		}
		all = map[string]bool{}
		for _, x := range k.Keys {
			all[x.KeyID] = x.Current
			if x.Current {
				cur = x.KeyID
			}
		}
		return cur, all
	}
	oldID, _ := keys()
	// 2. Announce while the old key signs.
	emit := func(event string) []byte {
		code, b := authed(t, "POST", c.base+"/v1/receipt/emit", secret, map[string]any{"subject": "ledger-key/cuasd/site1",
			"payload_type": "https://github.com/cuasd/cuasd/attestation/key-rotation/v1",
			"payload":      map[string]any{"event": event, "old_keyid": oldID, "new_keyid": newID}})
		if code != 201 {
			t.Fatalf("emit %s: %d %s", event, code, b)
		}
		return b // the receipt bundle, kept as the runbook says
	}
	announced := emit("rotation-announced")
	// 3. Switch keys and restart.
	stopChild(t, c)
	c = startChild(t, dir, "--auth-tokens", tokens, "--signing-key", newKey)
	defer stopChild(t, c)
	// 4. Record the completion with the new key.
	completed := emit("rotation-completed")
	// 5. Check: both keys listed, the new one current; each kept receipt
	// bundle verifies with the key that signed it, not with the other.
	cur, all := keys()
	if cur != newID || all[oldID] || len(all) < 2 {
		t.Fatalf("keys after the rotation: current %s (want %s), all %v", cur, newID, all)
	}
	oldPub := filepath.Join(dir, "ledger-signing-key.pub.pem")
	for i, tc := range []struct {
		b        []byte
		key, bad string
	}{{announced, oldPub, newPub}, {completed, newPub, oldPub}} {
		bundle := filepath.Join(t.TempDir(), "bundle.json")
		_ = os.WriteFile(bundle, tc.b, 0o600)
		var out bytes.Buffer
		if err := run(context.Background(), []string{"verify", bundle, "--pubkey", tc.key}, func(string) string { return "" }, &out, &out); err != nil {
			t.Errorf("receipt %d with its key: %v\n%s", i, err, out.String())
		}
		if err := run(context.Background(), []string{"verify", bundle, "--pubkey", tc.bad}, func(string) string { return "" }, &out, &out); err == nil {
			t.Errorf("receipt %d verified with the other key", i)
		}
	}
}
