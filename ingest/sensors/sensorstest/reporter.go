package sensorstest

import "github.com/cuasd/cuasd/lifecycle"

// Reporter is a lifecycle.Reporter that also hands each Retrying error to
// Retried, dropping it when Retried is full, so that a test can wait for a
// source to notice a failure.
type Reporter struct {
	lifecycle.Reporter
	Retried chan error
}

// NewReporter wraps rep; Retried holds up to n errors.
func NewReporter(rep lifecycle.Reporter, n int) *Reporter {
	return &Reporter{Reporter: rep, Retried: make(chan error, n)}
}

// Retrying implements lifecycle.Reporter.
func (r *Reporter) Retrying(err error) {
	r.Reporter.Retrying(err)
	select {
	case r.Retried <- err:
	default:
	}
}
