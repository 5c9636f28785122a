package bus

import "time"

// WithMinWait shortens s's first back-off, so that a test of many retries
// does not wait for real (the doubling and the cap stay).
func WithMinWait(s Setup, d time.Duration) Setup {
	s.minWait = d
	return s
}
