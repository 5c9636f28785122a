package ledger

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestOpenRefusesTamperedLog writes a forged batch straight into the
// stream behind a healthy log and checks that Open refuses to serve it.
func TestOpenRefusesTamperedLog(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, otherKey, _ := ed25519.GenerateKey(nil)
	other, _ := newEnvelopeSigner(otherKey, "cuasd/t")

	tests := []struct {
		name  string
		want  string // in the error: the check that caught it
		forge func(l *Log, envs [][]byte) []byte
	}{
		{"garbage", "bad magic", func(*Log, [][]byte) []byte { return []byte("not a batch") }},
		{"gap in indices", "starts at index 7, want 3", func(l *Log, envs [][]byte) []byte {
			return forgedBatch(t, l, l.signer, 7, envs[:1], nil)
		}},
		{"root does not match checkpoint", "rebuilt root at size 4", func(l *Log, envs [][]byte) []byte {
			bogus := make([]byte, 32)
			return forgedBatch(t, l, l.signer, 3, envs[:1], bogus)
		}},
		{"checkpoint signed by another key", "signature does not verify", func(l *Log, envs [][]byte) []byte {
			b := forgedBatch(t, l, other, 3, envs[:1], nil)
			// Claim the log's own verifier key for it.
			var bt batch
			if err := decodeBatch(&bt, b); err != nil {
				t.Fatal(err)
			}
			bt.vkey = []byte(l.signer.vkey)
			return bt.appendTo(nil)
		}},
		{"entry altered after signing", "rebuilt root at size 4", func(l *Log, envs [][]byte) []byte {
			b := forgedBatch(t, l, l.signer, 3, envs[:1], nil)
			var bt batch
			if err := decodeBatch(&bt, b); err != nil {
				t.Fatal(err)
			}
			bt.entries[0].env = envs[1]
			return bt.appendTo(nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			js, _ := StartNATS(t, filepath.Join(dir, "js"))
			ctx := context.Background()
			opts := Options{DataDir: dir, Instance: "t", Logger: quiet}
			l, err := Open(ctx, js, opts)
			if err != nil {
				t.Fatal(err)
			}
			var envs [][]byte
			for i := range 3 {
				r, err := l.Append(ctx, "s", "p", json.RawMessage(`{"i":`+string(rune('0'+i))+`}`))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(r.Envelope)
				envs = append(envs, b)
			}
			l.Close()
			if _, err := js.Publish(ctx, l.store.(*jsStore).subject, tt.forge(l, envs), jetstream.WithExpectLastSequence(l.store.count())); err != nil {
				t.Fatal(err)
			}
			if l2, err := Open(ctx, js, opts); KindOf(err) != KindIntegrity {
				if l2 != nil {
					l2.Close()
				}
				t.Fatalf("Open of a tampered log: %v, want an integrity error", err)
			} else if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open error %q does not name %q", err, tt.want)
			}
		})
	}
}

// forgedBatch builds a batch holding envs at index first, with a
// checkpoint over the log's tree plus envs (or over root, if given) signed
// by s.
func forgedBatch(t *testing.T, l *Log, s *envelopeSigner, first uint64, envs [][]byte, root []byte) []byte {
	t.Helper()
	tr := newTree()
	var leaf [hashSize]byte
	for i := range l.size {
		copy(leaf[:], l.tree.node(0, i))
		tr.append(&leaf)
	}
	b := batch{first: first}
	for _, e := range envs {
		tr.leafHash(&leaf, e)
		tr.append(&leaf)
		b.entries = append(b.entries, batchEntry{time: 1, env: e})
	}
	if root == nil {
		var err error
		if root, err = tr.root(tr.n); err != nil {
			t.Fatal(err)
		}
	}
	text, err := signCheckpoint(s, l.origin, first+uint64(len(envs)), root)
	if err != nil {
		t.Fatal(err)
	}
	b.checkpoint = []byte(text)
	b.vkey = []byte(s.vkey)
	return b.appendTo(nil)
}
