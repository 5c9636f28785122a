package ledger_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/cuasd/cuasd/ledger"
)

// crashDirEnv switches the test binary into the crash child: it appends
// receipts to the ledger in that directory until it is killed.
const crashDirEnv = "CUAS_LEDGER_CRASH_DIR"

// TestCrashChild is the child half of TestCrashKeepsAcknowledgedReceipts;
// it does nothing unless crashDirEnv is set.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCrashKeepsAcknowledgedReceipts")
	}
	l, _, _ := openLog(t, dir, ledger.Options{Instance: "crash"})
	var mu sync.Mutex
	out := os.Stdout
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				r, err := l.Append(context.Background(), fmt.Sprintf("w%d-%d", w, i), ledger.PredicateTypeGateDecision, record(i))
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(3)
				}
				// One write per acknowledged receipt, after the ack: what the
				// parent reads was durable before it was printed.
				line := fmt.Sprintf("ACK %d %s %s\n", r.Index, r.LeafHash, base64.StdEncoding.EncodeToString([]byte(r.Checkpoint)))
				mu.Lock()
				_, _ = out.WriteString(line)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCrashKeepsAcknowledgedReceipts SIGKILLs a process that is appending
// as fast as it can and checks, after reopening the same data directory,
// that every receipt it acknowledged is present at its index, that the
// indices have no gaps, and that every checkpoint it handed out is
// consistent with the recovered tree.
func TestCrashKeepsAcknowledgedReceipts(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	const acksBeforeKill = 3000

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	type ack struct {
		leaf string
		cp   string
	}
	acked := make(map[uint64]ack)
	checkpoints := make(map[string]bool)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	killed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "ACK" {
			continue // testing framework chatter
		}
		idx, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		cp, err := base64.StdEncoding.DecodeString(f[3])
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		if _, dup := acked[idx]; dup {
			t.Fatalf("index %d acknowledged twice", idx)
		}
		acked[idx] = ack{leaf: f[2], cp: string(cp)}
		checkpoints[string(cp)] = true
		if len(acked) == acksBeforeKill && !killed {
			// Mid-stream: 16 writers are still appending.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before %d acks (%d): %v\n%s", acksBeforeKill, len(acked), err, stderr.String())
	}
	t.Logf("child acknowledged %d receipts before SIGKILL took effect", len(acked))

	l, _, _ := openLog(t, dir, ledger.Options{Instance: "crash"})
	pub := readPub(t, dir)
	final := l.Checkpoint()
	var maxAcked uint64
	for idx := range acked {
		maxAcked = max(maxAcked, idx)
	}
	if final.Size <= maxAcked {
		t.Fatalf("recovered tree size %d, but index %d was acknowledged", final.Size, maxAcked)
	}
	t.Logf("recovered tree size %d (acknowledged up to index %d)", final.Size, maxAcked)

	// No gaps: every index below the size reads back, in order.
	ctx := context.Background()
	next := uint64(0)
	for next < final.Size {
		es, _, err := l.Entries(ctx, next, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Index != next {
				t.Fatalf("entry %d where %d was expected", e.Index, next)
			}
			if a, ok := acked[e.Index]; ok && a.leaf != e.LeafHash {
				t.Fatalf("entry %d has leaf %s, the acknowledged receipt had %s", e.Index, e.LeafHash, a.leaf)
			}
			next++
		}
		if len(es) == 0 {
			t.Fatalf("no entries from %d below size %d", next, final.Size)
		}
	}
	// Every receipt that was acknowledged is there (checked above for the
	// leaf; here that none is beyond the recovered log).
	for idx := range acked {
		if idx >= final.Size {
			t.Fatalf("acknowledged index %d is missing", idx)
		}
	}
	// Every checkpoint handed out is signed and consistent with the
	// recovered root.
	for cp := range checkpoints {
		origin, size, root, err := ledger.ParseCheckpoint([]byte(cp))
		if err != nil {
			t.Fatal(err)
		}
		verifyCheckpoint(t, cp, pub, origin, size, root)
		p, err := l.ConsistencyProof(size, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, size, final.Size, p, root, final.Root); err != nil {
			t.Fatalf("checkpoint at size %d is not consistent with the recovered tree: %v", size, err)
		}
	}
	t.Logf("%d distinct checkpoints handed out before the crash are consistent with root %s",
		len(checkpoints), hex.EncodeToString(final.Root))
}
