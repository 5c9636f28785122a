package alert

import (
	"fmt"
	"strings"
)

// Error is every error of package alert: a problem in a rule file (File,
// Line and Key say where) or in delivering an alert (Sink says to where).
type Error struct {
	File string
	Line int
	Key  string
	Sink string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("alerts")
	if e.File != "" {
		b.WriteString(" " + e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	if e.Sink != "" {
		b.WriteString(": sink " + e.Sink)
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
