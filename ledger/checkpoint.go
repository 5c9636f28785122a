package ledger

import (
	"bytes"
	"encoding/base64"
	"strconv"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a commitment to the log at one size, in the C2SP
// tlog-checkpoint format: the body is three lines (origin, decimal tree
// size, base64 root hash), and Text is that body as a signed note
// (golang.org/x/mod/sumdb/note) carrying an Ed25519 signature by the log's
// key under the key name Origin. In --unsigned mode Text is the bare body
// without a signature line.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   []byte // 32-byte RFC 6962 root hash
	Text   string // signed note (or bare body when unsigned)
}

// appendCheckpointBody appends the tlog-checkpoint body.
func appendCheckpointBody(dst []byte, origin string, size uint64, root []byte) []byte {
	dst = append(dst, origin...)
	dst = append(dst, '\n')
	dst = strconv.AppendUint(dst, size, 10)
	dst = append(dst, '\n')
	dst = base64.StdEncoding.AppendEncode(dst, root)
	return append(dst, '\n')
}

// ParseCheckpoint reads the body of a checkpoint (signed or not) without
// checking any signature: it returns the origin, size and root hash. It
// accepts the C2SP form: origin, size and root lines, optional extension
// lines, then either the end of the text or a blank line before the
// signatures.
func ParseCheckpoint(text []byte) (origin string, size uint64, root []byte, err error) {
	const op = "parse checkpoint"
	body := text
	if i := bytes.Index(text, []byte("\n\n")); i >= 0 {
		body = text[:i+1]
	}
	line := func() ([]byte, bool) {
		i := bytes.IndexByte(body, '\n')
		if i < 0 {
			return nil, false
		}
		l := body[:i]
		body = body[i+1:]
		return l, true
	}
	o, ok := line()
	if !ok || len(o) == 0 {
		return "", 0, nil, errf(KindInvalid, op, "missing origin line", nil)
	}
	s, ok := line()
	if !ok {
		return "", 0, nil, errf(KindInvalid, op, "missing tree size line", nil)
	}
	// No sign, no leading zeros (except "0"): the size has one spelling.
	if len(s) == 0 || (len(s) > 1 && s[0] == '0') || s[0] == '+' || s[0] == '-' {
		return "", 0, nil, errf(KindInvalid, op, "malformed tree size", nil)
	}
	size, perr := strconv.ParseUint(string(s), 10, 64)
	if perr != nil {
		return "", 0, nil, errf(KindInvalid, op, "malformed tree size", perr)
	}
	r, ok := line()
	if !ok {
		return "", 0, nil, errf(KindInvalid, op, "missing root hash line", nil)
	}
	root, derr := base64.StdEncoding.Strict().DecodeString(string(r))
	if derr != nil || len(root) != 32 {
		return "", 0, nil, errf(KindInvalid, op, "root hash is not 32 bytes of base64", derr)
	}
	return string(o), size, root, nil
}

// signCheckpoint returns the checkpoint text for a tree: a signed note when
// s is non-nil, the bare body otherwise.
func signCheckpoint(s *envelopeSigner, origin string, size uint64, root []byte) (string, error) {
	body := string(appendCheckpointBody(nil, origin, size, root))
	if s == nil {
		return body, nil
	}
	msg, err := note.Sign(&note.Note{Text: body}, noteSigner{s})
	if err != nil {
		return "", errf(KindStorage, "sign checkpoint", "", err)
	}
	return string(msg), nil
}
