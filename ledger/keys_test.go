package ledger

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// TestKeyIDMatchesOpenSSL generates a key with the openssl CLI and checks
// that ParsePrivateKeyPEM reads it and that KeyID equals the SHA-256 of the
// DER public key as openssl prints it: an independent reference for the
// PEM formats and the keyid definition.
func TestKeyIDMatchesOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k.pem")
	pub := filepath.Join(dir, "k.pub.pem")
	der := filepath.Join(dir, "k.pub.der")
	run := func(args ...string) []byte {
		out, err := exec.Command("openssl", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
		return out
	}
	run("genpkey", "-algorithm", "ed25519", "-out", key)
	run("pkey", "-in", key, "-pubout", "-out", pub)
	run("pkey", "-in", key, "-pubout", "-outform", "DER", "-out", der)
	out := run("dgst", "-sha256", "-r", der)
	want := strings.Fields(string(out))[0]

	kb, _ := os.ReadFile(key)
	priv, err := ParsePrivateKeyPEM(kb)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := os.ReadFile(pub)
	pk, err := ParsePublicKeyPEM(pb)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pk, priv.Public().(ed25519.PublicKey)) {
		t.Fatal("openssl's public key differs from the parsed private key's")
	}
	if got := KeyID(pk); got != want {
		t.Errorf("KeyID = %s, openssl says %s", got, want)
	}
	// Our PEM encoding of the public key is what openssl wrote.
	if got, _ := MarshalPublicKeyPEM(pk); !bytes.Equal(got, pb) {
		t.Errorf("MarshalPublicKeyPEM =\n%s\nopenssl wrote\n%s", got, pb)
	}
}

func TestParseKeyRejects(t *testing.T) {
	tests := []struct{ name, pem string }{
		{"empty", ""},
		{"not pem", "hello"},
		{"wrong type", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"},
		{"garbage der", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParsePrivateKeyPEM([]byte(tt.pem)); KindOf(err) != KindInvalid {
				t.Errorf("ParsePrivateKeyPEM err = %v", err)
			}
			if _, err := ParsePublicKeyPEM([]byte(tt.pem)); KindOf(err) != KindInvalid {
				t.Errorf("ParsePublicKeyPEM err = %v", err)
			}
		})
	}
}

func TestGeneratedKeyIsPrivateAndReused(t *testing.T) {
	dir := t.TempDir()
	k1, p, created, _, err := loadKey("", dir)
	if err != nil || !created {
		t.Fatalf("first load: created=%v err=%v", created, err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	k2, _, created, _, err := loadKey("", dir)
	if err != nil || created {
		t.Fatalf("second load: created=%v err=%v", created, err)
	}
	if !k1.Equal(k2) {
		t.Error("second start generated a different key")
	}
	pb, err := os.ReadFile(filepath.Join(dir, GeneratedPublicKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKeyPEM(pb)
	if err != nil || !pub.Equal(k1.Public()) {
		t.Errorf("public key file does not hold the key's public half: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("data dir holds %d files, want the key and its public half", len(entries))
	}
}

func TestParseVerifierKeyRoundTrip(t *testing.T) {
	// Base64 keys contain '+' often enough in 64 tries to exercise the split.
	for range 64 {
		pub, _, _ := ed25519.GenerateKey(nil)
		vkey, err := note.NewEd25519VerifierKey("cuasd/x", pub)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseVerifierKey(vkey)
		if err != nil || !got.Equal(pub) {
			t.Fatalf("parseVerifierKey(%q) = %x, %v", vkey, got, err)
		}
	}
	for _, bad := range []string{"", "a+b", "cuasd/x+00000000+AAAA", "cuasd/x+zz+AQ=="} {
		if _, err := parseVerifierKey(bad); err == nil {
			t.Errorf("parseVerifierKey(%q) accepted", bad)
		}
	}
}
