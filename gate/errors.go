package gate

import "strings"

// Error reports input that fails validation. Each FieldError names one
// offending field with a JSON path relative to the validated value (for
// example "center[0]" or "polygon.coordinates[0][3]"), so that an HTTP
// layer can report every problem at once.
type Error struct {
	Fields []FieldError
}

// FieldError is one invalid field: its JSON path and what is wrong. It is
// the one field-error type of cuasd: package swarm's validation and the
// HTTP layer's problem details (the "errors" member) use it too.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("gate: invalid input: ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	return b.String()
}

// add records one problem; prefix is joined to field with a dot.
func (e *Error) add(prefix, field, msg string) {
	e.Fields = append(e.Fields, FieldError{Field: join(prefix, field), Message: msg})
}

// orNil returns e when it holds a problem and nil otherwise, so validators
// can return a typed nil-free error.
func (e *Error) orNil() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

func join(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case field[0] == '[':
		return prefix + field
	}
	return prefix + "." + field
}
