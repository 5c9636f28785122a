package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// TestMain lets the test binary act as cuasd itself, so the crash test can
// run a real cuasd process and SIGKILL it.
func TestMain(m *testing.M) {
	if os.Getenv("CUASD_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

type child struct {
	cmd  *exec.Cmd
	base string
}

func startChild(t *testing.T, dir string, extra ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--data-dir", dir, "--http-addr", "127.0.0.1:0", "--nats-listen", "off", "--log-level", "warn"}, extra...)...)
	cmd.Env = append(os.Environ(), "CUASD_TEST_AS_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "cuasd serving "); ok {
				lines <- strings.TrimSuffix(u, "/")
			}
		}
	}()
	select {
	case u := <-lines:
		return &child{cmd: cmd, base: u}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child cuasd did not start")
	}
	return nil
}

type ack struct {
	Index      uint64 `json:"index"`
	LeafHash   string `json:"leaf_hash"`
	TreeSize   uint64 `json:"tree_size"`
	RootHash   string `json:"root_hash"`
	Checkpoint string `json:"checkpoint"`
}

// TestSIGKILLKeepsEveryAcknowledgedReceipt kills a cuasd that is emitting
// receipts from several clients, restarts it on the same data directory and
// checks that every receipt answered 201 is at its index with its leaf hash,
// that the log has no gaps, and that every root handed out before the crash
// is consistent with the recovered tree.
func TestSIGKILLKeepsEveryAcknowledgedReceipt(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, dir)
	var mu sync.Mutex
	var acks []ack
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				body := fmt.Sprintf(`{"subject":"crash-test-%d-%d","payload":{"worker":%d,"n":%d}}`, w, i, w, i)
				resp, err := client.Post(c.base+"/v1/receipt/emit", "application/json", strings.NewReader(body))
				if err != nil {
					return // the process died mid-request: not acknowledged
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 201 {
					continue
				}
				var a ack
				if json.Unmarshal(b, &a) == nil {
					mu.Lock()
					acks = append(acks, a)
					mu.Unlock()
				}
			}
		}(w)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 400 {
			break
		}
		if time.Now().After(deadline) {
			c.cmd.Process.Kill()
			cancel()
			t.Fatalf("only %d receipts acknowledged in 2 minutes", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	cancel()
	wg.Wait()
	t.Logf("%d receipts acknowledged before SIGKILL", len(acks))

	c2 := startChild(t, dir)
	defer func() {
		c2.cmd.Process.Signal(syscall.SIGTERM)
		c2.cmd.Wait()
	}()
	var cp struct {
		TreeSize uint64 `json:"tree_size"`
		RootHash string `json:"root_hash"`
	}
	_, body := get(t, c2.base+"/v1/receipt/checkpoint")
	if err := json.Unmarshal(body, &cp); err != nil {
		t.Fatalf("checkpoint: %s", body)
	}
	newRoot, _ := hex.DecodeString(cp.RootHash)
	h := rfc6962.DefaultHasher
	for _, a := range acks {
		if a.Index >= cp.TreeSize {
			t.Fatalf("acknowledged index %d beyond the recovered size %d", a.Index, cp.TreeSize)
		}
		resp, b := get(t, fmt.Sprintf("%s/v1/receipt/%d", c2.base, a.Index))
		var got ack
		if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || got.LeafHash != a.LeafHash {
			t.Fatalf("receipt %d after restart: %d %s (leaf %s, acknowledged %s)", a.Index, resp.StatusCode, b, got.LeafHash, a.LeafHash)
		}
	}
	// Every root handed out before the crash is a prefix of the new tree.
	seen := map[uint64]bool{}
	for _, a := range acks {
		if seen[a.TreeSize] || a.TreeSize == cp.TreeSize {
			continue
		}
		seen[a.TreeSize] = true
		resp, b := get(t, fmt.Sprintf("%s/v1/receipt/proof/consistency?first=%d&second=%d", c2.base, a.TreeSize, cp.TreeSize))
		var cons struct {
			Proof []string `json:"proof"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &cons) != nil {
			t.Fatalf("consistency %d→%d: %d %s", a.TreeSize, cp.TreeSize, resp.StatusCode, b)
		}
		var pf [][]byte
		for _, p := range cons.Proof {
			x, _ := hex.DecodeString(p)
			pf = append(pf, x)
		}
		oldRoot, _ := hex.DecodeString(a.RootHash)
		if err := proof.VerifyConsistency(h, a.TreeSize, cp.TreeSize, pf, oldRoot, newRoot); err != nil {
			t.Fatalf("root of size %d handed out before the crash is not consistent with the recovered tree: %v", a.TreeSize, err)
		}
	}
	// No gaps: every index up to the size is served.
	for from := uint64(0); from < cp.TreeSize; from += 1000 {
		resp, b := get(t, fmt.Sprintf("%s/v1/receipt/ledger?from=%d&limit=1000", c2.base, from))
		var l struct {
			Entries []struct {
				Index uint64 `json:"index"`
			} `json:"entries"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &l) != nil {
			t.Fatalf("ledger page %d: %d", from, resp.StatusCode)
		}
		for i, e := range l.Entries {
			if e.Index != from+uint64(i) {
				t.Fatalf("gap: entry %d at position %d", e.Index, from+uint64(i))
			}
		}
	}
}
