package ledger

import "errors"

// Kind classifies an Error so that callers (the HTTP layer, the CLI) can
// map it to a status or exit code without parsing messages.
type Kind int

// The kinds of failure the ledger reports.
const (
	// KindInvalid: the caller's input is malformed (not a JSON object,
	// empty subject, bad index or range).
	KindInvalid Kind = iota + 1
	// KindTooLarge: the record is over MaxRecordBytes.
	KindTooLarge
	// KindNotFound: no entry at that index (yet).
	KindNotFound
	// KindClosed: the log was closed.
	KindClosed
	// KindStorage: the store failed; the entry was not acknowledged.
	KindStorage
	// KindIntegrity: what is stored disagrees with itself or with its
	// signed checkpoint. The log refuses to serve a tree it cannot vouch for.
	KindIntegrity
	// KindVerify: offline verification of a receipt failed.
	KindVerify
)

// Error is the one error type of package ledger.
type Error struct {
	Kind Kind   // what class of failure
	Op   string // what the ledger was doing, e.g. "append" or "open"
	Msg  string // human-readable reason
	Err  error  // underlying cause, if any
}

// The sentinels below match any *Error of the same Kind with errors.Is,
// e.g. errors.Is(err, ledger.ErrNotFound).
var (
	ErrInvalid   = &Error{Kind: KindInvalid}
	ErrTooLarge  = &Error{Kind: KindTooLarge}
	ErrNotFound  = &Error{Kind: KindNotFound}
	ErrClosed    = &Error{Kind: KindClosed}
	ErrStorage   = &Error{Kind: KindStorage}
	ErrIntegrity = &Error{Kind: KindIntegrity}
	ErrVerify    = &Error{Kind: KindVerify}
)

// Error implements error.
func (e *Error) Error() string {
	s := "ledger"
	if e.Op != "" {
		s += " " + e.Op
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Msg == "" && e.Err == nil {
		s += ": " + e.Kind.String()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) and friends match on Kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Msg == "" && t.Err == nil && t.Kind == e.Kind
}

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid input"
	case KindTooLarge:
		return "too large"
	case KindNotFound:
		return "not found"
	case KindClosed:
		return "closed"
	case KindStorage:
		return "storage failure"
	case KindIntegrity:
		return "integrity failure"
	case KindVerify:
		return "verification failed"
	}
	return "unknown"
}

// KindOf returns the Kind of the first *Error in err's chain, or 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func errf(kind Kind, op, msg string, cause error) *Error {
	return &Error{Kind: kind, Op: op, Msg: msg, Err: cause}
}
