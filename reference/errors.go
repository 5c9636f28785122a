package reference

import (
	"fmt"
	"strings"
)

// Error reports an invalid query or an invalid embedded record. Field names
// the offending filter or record field; Allowed, when set, lists the values
// that would have been accepted, so that a caller can be told what to send.
type Error struct {
	Field   string
	Value   string
	Allowed []string
	Msg     string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Value != "" {
		fmt.Fprintf(&b, " (got %q)", e.Value)
	}
	if len(e.Allowed) > 0 {
		b.WriteString("; allowed: ")
		b.WriteString(strings.Join(e.Allowed, ", "))
	}
	return b.String()
}
