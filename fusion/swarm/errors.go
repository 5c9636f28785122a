package swarm

import (
	"strings"

	"github.com/cuasd/cuasd/gate"
)

// Error reports invalid tracks or options, naming each offending field
// with its JSON path (for example "tracks[3].lat" or "link_m").
type Error struct {
	Fields []FieldError
	// OverBudget marks valid input that needs more work than
	// Options.MaxPairTests allows (too many tracks within a link distance
	// of each other); Fields then names what to change.
	OverBudget bool
}

// FieldError is one invalid field of an Error: gate's type.
type FieldError = gate.FieldError

func (e *Error) Error() string {
	var b strings.Builder
	if e.OverBudget {
		b.WriteString("swarm: over the work budget: ")
	} else {
		b.WriteString("swarm: invalid input: ")
	}
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field + ": " + f.Message)
	}
	return b.String()
}

func (e *Error) add(field, msg string) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: msg})
}

func (e *Error) orNil() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}
