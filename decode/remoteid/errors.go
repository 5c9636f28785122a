package remoteid

import "fmt"

// Error is the only error type of this package: input that cannot be decoded.
// Offset is the index, in the byte slice handed to the decoder, of the byte
// at fault (for a length error, the length that was found). Reason says why
// in words an operator can act on.
type Error struct {
	Offset int
	Reason string
	// notRID marks "this carrier frame holds no Remote ID payload", which
	// matches ErrNotRemoteID under errors.Is.
	notRID bool
}

// ErrNotRemoteID is matched (with errors.Is) by the errors that carrier
// decoders return for a well- or ill-formed frame in which no Remote ID
// container (vendor IE, NAN service, advertising service data) was found.
// Capture replay skips such frames; the decode endpoint reports them.
var ErrNotRemoteID = &Error{Reason: "no Remote ID payload found", notRID: true}

// Is makes every "no Remote ID here" error match ErrNotRemoteID.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t == ErrNotRemoteID && e.notRID
}

func (e *Error) Error() string {
	return fmt.Sprintf("remoteid: byte %d: %s", e.Offset, e.Reason)
}

// errAt builds an *Error. It is only reached on the failure path, so the
// allocation does not touch the zero-allocation guarantee for valid input.
func errAt(off int, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Offset: off, Reason: format}
	}
	return &Error{Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// notRemoteID builds an error that matches ErrNotRemoteID.
func notRemoteID(off int, reason string) *Error {
	return &Error{Offset: off, Reason: reason, notRID: true}
}

// rebase shifts an inner decoder's error so that its offset counts from the
// start of the enclosing buffer (pack inside a carrier, message inside a pack).
func rebase(err error, base int) error {
	if e, ok := err.(*Error); ok && e != ErrNotRemoteID {
		e.Offset += base
		return e
	}
	return err
}
