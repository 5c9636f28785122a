package ledger

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"
)

// Key file names inside Options.DataDir when the key is generated.
const (
	// GeneratedKeyFile holds the generated Ed25519 private key (PKCS#8 PEM,
	// mode 0600).
	GeneratedKeyFile = "ledger-signing-key.pem"
	// GeneratedPublicKeyFile holds its public key (PKIX PEM), the file to
	// hand to `cuasd verify --pubkey`.
	GeneratedPublicKeyFile = "ledger-signing-key.pub.pem"
)

// KeyID is the identifier of an Ed25519 public key in envelopes and in
// GET /v1/receipt/keys: the lower-case hex SHA-256 of its PKIX
// (SubjectPublicKeyInfo) DER encoding, which is what
// `openssl pkey -pubin -in key.pub.pem -outform DER | sha256sum` prints.
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		// Only a public key of the wrong length gets here; give it no
		// identity rather than a made-up one.
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// ParsePrivateKeyPEM reads an Ed25519 private key from PKCS#8 PEM
// ("PRIVATE KEY"), the format of `openssl genpkey -algorithm ed25519`.
func ParsePrivateKeyPEM(data []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errf(KindInvalid, "read key", "no PEM block found", nil)
	}
	if block.Type != "PRIVATE KEY" {
		return nil, errf(KindInvalid, "read key", fmt.Sprintf("PEM block is %q, want PKCS#8 \"PRIVATE KEY\"", block.Type), nil)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errf(KindInvalid, "read key", "not PKCS#8", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, errf(KindInvalid, "read key", fmt.Sprintf("key is %T, want Ed25519", k), nil)
	}
	return priv, nil
}

// ParsePublicKeyPEM reads an Ed25519 public key from PKIX PEM
// ("PUBLIC KEY"), the format of `openssl pkey -pubout`.
func ParsePublicKeyPEM(data []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errf(KindInvalid, "read public key", "no PEM block found", nil)
	}
	if block.Type != "PUBLIC KEY" {
		return nil, errf(KindInvalid, "read public key", fmt.Sprintf("PEM block is %q, want \"PUBLIC KEY\"", block.Type), nil)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, errf(KindInvalid, "read public key", "not PKIX", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errf(KindInvalid, "read public key", fmt.Sprintf("key is %T, want Ed25519", k), nil)
	}
	return pub, nil
}

// MarshalPublicKeyPEM encodes an Ed25519 public key as PKIX PEM.
func MarshalPublicKeyPEM(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// loadKey returns the signing key: the operator's file when path is set,
// otherwise the key generated into dataDir at first start (and reused
// after). created reports a fresh key; warn collects remarks for the log.
func loadKey(path, dataDir string) (priv ed25519.PrivateKey, source string, created bool, warn []string, err error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, "", false, nil, errf(KindInvalid, "open", "read --signing-key", err)
		}
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			warn = append(warn, fmt.Sprintf("signing key file %s is readable by group or others (mode %v)", path, st.Mode().Perm()))
		}
		priv, err := ParsePrivateKeyPEM(b)
		return priv, path, false, warn, err
	}
	if dataDir == "" {
		return nil, "", false, nil, errf(KindInvalid, "open", "neither a signing key file nor a data directory for a generated key is configured", nil)
	}
	p := filepath.Join(dataDir, GeneratedKeyFile)
	b, err := os.ReadFile(p)
	switch {
	case err == nil:
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o077 != 0 {
			warn = append(warn, fmt.Sprintf("generated signing key %s is readable by group or others (mode %v)", p, st.Mode().Perm()))
		}
		priv, err := ParsePrivateKeyPEM(b)
		return priv, p, false, warn, err
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", false, nil, errf(KindStorage, "open", "read generated signing key", err)
	}
	priv, err = generateKeyFile(dataDir, p)
	return priv, p, err == nil, warn, err
}

// generateKeyFile creates a new Ed25519 key at p with mode 0600. The key is
// written to a temporary file, synced, and linked into place, so a crash
// never leaves a half-written key, and two processes starting at once agree
// on one key (the loser of the link reads the winner's).
func generateKeyFile(dataDir, p string) (ed25519.PrivateKey, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, errf(KindStorage, "open", "create data directory", err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, errf(KindStorage, "open", "generate key", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, errf(KindStorage, "open", "encode key", err)
	}
	tmp, err := os.CreateTemp(dataDir, ".ledger-key-*")
	if err != nil {
		return nil, errf(KindStorage, "open", "create key file", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, errf(KindStorage, "open", "chmod key file", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return nil, errf(KindStorage, "open", "write key file", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, errf(KindStorage, "open", "sync key file", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, errf(KindStorage, "open", "close key file", err)
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				return nil, errf(KindStorage, "open", "read signing key", rerr)
			}
			return ParsePrivateKeyPEM(b)
		}
		return nil, errf(KindStorage, "open", "install key file", err)
	}
	syncDir(dataDir)
	// The public half, for verifiers. Best effort: it can be recomputed.
	if pp, err := MarshalPublicKeyPEM(priv.Public().(ed25519.PublicKey)); err == nil {
		_ = os.WriteFile(filepath.Join(dataDir, GeneratedPublicKeyFile), pp, 0o644)
	}
	return priv, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// envelopeSigner is the dsse.Signer (and note.Signer) of the ledger's
// Ed25519 key.
type envelopeSigner struct {
	priv    ed25519.PrivateKey
	pub     ed25519.PublicKey
	keyID   string
	name    string // signed-note key name: the log origin
	keyHash uint32 // signed-note key hash
	vkey    string // signed-note verifier key text
}

func newEnvelopeSigner(priv ed25519.PrivateKey, origin string) (*envelopeSigner, error) {
	pub := priv.Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(origin, pub)
	if err != nil {
		return nil, errf(KindInvalid, "open", "signed-note key", err)
	}
	return &envelopeSigner{
		priv:    priv,
		pub:     pub,
		keyID:   KeyID(pub),
		name:    origin,
		keyHash: noteKeyHash(origin, pub),
		vkey:    vkey,
	}, nil
}

// noteKeyHash is the signed-note key hash: the first four bytes (big
// endian) of SHA-256(name || "\n" || 0x01 || public key), 0x01 being the
// Ed25519 algorithm byte.
func noteKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', 0x01})
	h.Write(pub)
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint32(h.Sum(sum[:0]))
}

// Sign implements dsse.Signer: an Ed25519 signature over the PAE bytes.
func (s *envelopeSigner) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, data), nil
}

// KeyID implements dsse.Signer.
func (s *envelopeSigner) KeyID() (string, error) { return s.keyID, nil }

// noteSigner adapts the key to note.Signer for checkpoints.
type noteSigner struct{ s *envelopeSigner }

func (n noteSigner) Name() string                    { return n.s.name }
func (n noteSigner) KeyHash() uint32                 { return n.s.keyHash }
func (n noteSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(n.s.priv, msg), nil }
