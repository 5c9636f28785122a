package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CheckStore checks that the ledger's stream still holds every batch this
// log stored (issue 23): a stream deleted or truncated behind the log's
// back is a KindIntegrity error naming it, and is never recreated empty.
// With Options.DataDir set, it also records the number of stored batches
// in the data directory (ledger-<stream>.batches), so that a later Open
// that finds fewer refuses to serve the shortened log instead of starting
// an empty one in its place. Callers run it periodically; it is safe for
// concurrent use.
func (l *Log) CheckStore(ctx context.Context) error {
	js, ok := l.store.(*jsStore)
	if !ok {
		return nil
	}
	n, err := js.check(ctx)
	if err != nil {
		return err
	}
	return l.mark(n)
}

// markerPath is the file that records how many batches the stream held.
func markerPath(dataDir, stream string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, "ledger-"+stream+".batches")
}

// mark records n stored batches in the marker file when it grew.
func (l *Log) mark(n uint64) error {
	if l.marker == "" || n <= l.marked.Load() {
		return nil
	}
	tmp := l.marker + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatUint(n, 10)+"\n"), 0o600); err != nil {
		return errf(KindStorage, "mark", "write "+tmp, err)
	}
	if err := os.Rename(tmp, l.marker); err != nil {
		return errf(KindStorage, "mark", "rename "+tmp, err)
	}
	l.marked.Store(n)
	return nil
}

// checkMarker refuses a stream holding fewer batches than the marker file
// says an earlier run stored: the stream was deleted (and has just been
// created empty) or truncated.
func checkMarker(path string, s *jsStore) (uint64, error) {
	if path == "" {
		return 0, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, errf(KindStorage, "open", "read "+path, err)
	}
	want, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, errf(KindIntegrity, "open", path+" is not a batch count", err)
	}
	if s.last < want {
		return 0, errf(KindIntegrity, "open", fmt.Sprintf(
			"stream %s holds %d batches but %d were stored before (%s): acknowledged receipts are gone; restore the stream from a backup, or move the marker away to start over knowingly",
			s.name, s.last, want, path), nil)
	}
	return want, nil
}
