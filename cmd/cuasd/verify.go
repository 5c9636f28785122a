package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cuasd/cuasd/ledger"
)

const verifyUsage = `Usage:
  cuasd verify BUNDLE|- [--pubkey FILE] [--checkpoint FILE] [--consistency FILE]
               [--envelope-out FILE] [--record-out FILE]

Checks a receipt bundle (the answer of POST /v1/receipt/emit or
GET /v1/receipt/{index}) offline: the in-toto statement and its subject
digest, the RFC 6962 leaf hash and inclusion proof, the checkpoint, and the
Ed25519 signatures of the envelope and the checkpoint under --pubkey (the
PKIX PEM of GET /v1/receipt/keys, or ledger-signing-key.pub.pem in the data
directory). Without --pubkey the signatures are not checked and the bundle
does not verify.

--checkpoint is a checkpoint you trust independently (a signed note, or the
JSON of GET /v1/receipt/checkpoint). If its tree and the bundle's differ in
size, give --consistency: the JSON of
GET /v1/receipt/proof/consistency?first=<the smaller>&second=<the larger>
(a checkpoint kept from before a backup is older than a later bundle's tree).

--envelope-out and --record-out write the DSSE envelope and the record (the
exact bytes the statement's subject digest covers), the inputs of
  cosign verify-blob-attestation --key KEY.pem --signature ENVELOPE \
    --type <predicateType> --insecure-ignore-tlog=true RECORD

Any one of BUNDLE, --pubkey, --checkpoint and --consistency may be - for
standard input.

Exit status 0 when every check passes, 1 otherwise, with the reasons.
`

// runVerify implements `cuasd verify`.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cuasd verify", verifyUsage, args, stdout, stderr)
	pubPath := fs.String("pubkey", "", "Ed25519 public key `FILE` (PKIX PEM) of the ledger (- for standard input)")
	cpPath := fs.String("checkpoint", "", "a trusted checkpoint `FILE` (signed note or GET /v1/receipt/checkpoint JSON; - for standard input)")
	consPath := fs.String("consistency", "", "consistency proof JSON `FILE` from the bundle's tree size to the checkpoint's (- for standard input)")
	envOut := fs.String("envelope-out", "", "write the DSSE envelope JSON to `FILE` (cosign --signature)")
	recOut := fs.String("record-out", "", "write the record, the statement's predicate bytes, to `FILE` (cosign's blob)")

	// Flags may come before or after the bundle.
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("verify: %w", err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return fmt.Errorf("verify: give exactly one bundle file (got %d)", len(pos))
	}
	if err := oneStdin(map[string]string{"the bundle": pos[0], "--pubkey": *pubPath,
		"--checkpoint": *cpPath, "--consistency": *consPath}); err != nil {
		return fmt.Errorf("verify: %w", err)
	}

	r, err := readBundle(pos[0])
	if err != nil {
		return err
	}
	opts, err := verifyOptions(*pubPath, *cpPath, *consPath, r.TreeSize)
	if err != nil {
		return err
	}
	if *envOut != "" || *recOut != "" {
		if err := export(r, *envOut, *recOut); err != nil {
			return err
		}
	}
	checks, verr := ledger.VerifyReceipt(r, opts)
	return reportVerify(stdout, r, inputName(pos[0]), opts, checks, verr)
}

// verifyOptions reads the trusted public key, checkpoint and consistency
// proof (to the checkpoint from the bundle's tree size) that were given.
func verifyOptions(pubPath, cpPath, consPath string, treeSize uint64) (ledger.VerifyOptions, error) {
	var opts ledger.VerifyOptions
	var err error
	if pubPath != "" {
		b, err := readInput(pubPath)
		if err != nil {
			return opts, fmt.Errorf("verify: --pubkey: %w", err)
		}
		if opts.PublicKey, err = ledger.ParsePublicKeyPEM(b); err != nil {
			return opts, fmt.Errorf("verify: --pubkey %s: %w", inputName(pubPath), err)
		}
	}
	if cpPath != "" {
		if opts.Checkpoint, err = readCheckpoint(cpPath); err != nil {
			return opts, err
		}
	}
	if consPath != "" {
		if cpPath == "" {
			return opts, errors.New("verify: --consistency needs --checkpoint")
		}
		if opts.Consistency, err = readConsistency(consPath, treeSize, opts.Checkpoint); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// reportVerify prints every check and the verdict; a failed verification
// is errSilent (exit status 1, the reasons already printed).
func reportVerify(stdout io.Writer, r *ledger.Receipt, name string, opts ledger.VerifyOptions, checks []ledger.Check, verr error) error {
	for _, c := range checks {
		status := "ok  "
		if !c.OK {
			status = "FAIL"
		}
		fmt.Fprintf(stdout, "%s  %-20s %s\n", status, c.Name, c.Detail)
	}
	origin, _, _, _ := ledger.ParseCheckpoint([]byte(r.Checkpoint))
	if verr != nil {
		fmt.Fprintf(stdout, "NOT VERIFIED: entry %d of %s (log %s); failed: %s\n", r.Index, name, origin, failedChecks(checks))
		return errSilent
	}
	fmt.Fprintf(stdout, "verified: entry %d is in the log %s at tree size %d, signed by keyid %s\n",
		r.Index, origin, r.TreeSize, ledger.KeyID(opts.PublicKey))
	return nil
}

// failedChecks names the checks that failed, in order.
func failedChecks(checks []ledger.Check) string {
	var names []string
	for _, c := range checks {
		if !c.OK {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

func readBundle(path string) (*ledger.Receipt, error) {
	b, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	path = inputName(path)
	var r ledger.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("verify: %s is not a receipt bundle: %w", path, err)
	}
	if r.Envelope.Payload == "" || r.Checkpoint == "" {
		return nil, fmt.Errorf("verify: %s is not a receipt bundle: no envelope or checkpoint", path)
	}
	return &r, nil
}

// readCheckpoint reads a signed note, or the JSON answer of
// GET /v1/receipt/checkpoint.
func readCheckpoint(path string) ([]byte, error) {
	b, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("verify: --checkpoint: %w", err)
	}
	path = inputName(path)
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var a struct {
			Checkpoint string `json:"checkpoint"`
		}
		if err := json.Unmarshal(t, &a); err != nil || a.Checkpoint == "" {
			return nil, fmt.Errorf("verify: --checkpoint %s: JSON without a checkpoint field", path)
		}
		return []byte(a.Checkpoint), nil
	}
	return b, nil
}

// readConsistency reads the JSON answer of GET /v1/receipt/proof/consistency
// and checks that it spans the bundle's tree and the trusted checkpoint's.
func readConsistency(path string, from uint64, cp []byte) ([][]byte, error) {
	b, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("verify: --consistency: %w", err)
	}
	path = inputName(path)
	var a struct {
		First  *uint64  `json:"first"`
		Second *uint64  `json:"second"`
		Proof  []string `json:"proof"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.First == nil || a.Second == nil || a.Proof == nil {
		return nil, fmt.Errorf("verify: --consistency %s: want the JSON of GET /v1/receipt/proof/consistency", path)
	}
	_, to, _, err := ledger.ParseCheckpoint(cp)
	if err != nil {
		return nil, fmt.Errorf("verify: --checkpoint: %w", err)
	}
	if to < from {
		from, to = to, from // a trusted checkpoint older than the bundle's tree: the proof runs from it
	}
	if *a.First != from || *a.Second != to {
		return nil, fmt.Errorf("verify: --consistency proves %d -> %d; the bundle and checkpoint need %d -> %d", *a.First, *a.Second, from, to)
	}
	p, err := ledger.DecodeHashes(a.Proof)
	if err != nil {
		return nil, fmt.Errorf("verify: --consistency: %w", err)
	}
	return p, nil
}

// export writes the envelope and the record for other DSSE/in-toto tools.
func export(r *ledger.Receipt, envPath, recPath string) error {
	if envPath != "" {
		b, err := json.Marshal(&r.Envelope)
		if err != nil {
			return fmt.Errorf("verify: --envelope-out: %w", err)
		}
		if err := os.WriteFile(envPath, b, 0o644); err != nil {
			return fmt.Errorf("verify: --envelope-out: %w", err)
		}
	}
	if recPath != "" {
		st, err := ledger.DecodeStatement(&r.Envelope)
		if err != nil {
			return fmt.Errorf("verify: --record-out: %w", err)
		}
		if err := os.WriteFile(recPath, st.Predicate, 0o644); err != nil {
			return fmt.Errorf("verify: --record-out: %w", err)
		}
	}
	return nil
}
