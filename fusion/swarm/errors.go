package swarm

import "strings"

// Error reports invalid tracks or options, naming each offending field
// with its JSON path (for example "tracks[3].lat" or "link_m").
type Error struct {
	Fields []FieldError
}

// FieldError is one invalid field of an Error.
type FieldError struct {
	Field   string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("swarm: invalid input: ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field + ": " + f.Message)
	}
	return b.String()
}

func (e *Error) add(field, msg string) { e.Fields = append(e.Fields, FieldError{field, msg}) }

func (e *Error) orNil() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}
