package history

import (
	"context"
	"os"
	"testing"
	"time"
)

// kill leaves st as a killed process would: nothing compacted, files
// closed.
func kill(st *Store) {
	_ = st.closeDB()
	_ = st.log.close()
}

func countOf(t *testing.T, st *Store, id string) int {
	t.Helper()
	n, err := st.Count(context.Background(), id, t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPendingLogTornTail: a record cut short by a crash is ignored, and
// records appended after the restart are read at the next one.
func TestPendingLogTornTail(t *testing.T) {
	st, path := openTemp(t)
	insert(t, st, track("adsb:T", "adsb", t0, time.Second, 10, 1, 1))
	kill(st)
	f, err := os.OpenFile(path+".pending", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 5}); err != nil { // a torn record
		t.Fatal(err)
	}
	f.Close()
	st, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := countOf(t, st, "adsb:T"); n != 10 {
		t.Fatalf("%d points after the torn tail, want 10", n)
	}
	insert(t, st, track("adsb:T", "adsb", t0.Add(time.Minute), time.Second, 5, 1, 1))
	kill(st)
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := countOf(t, st, "adsb:T"); n != 15 {
		t.Fatalf("%d points after the second restart, want 15", n)
	}
}

// TestPendingLogReplayedAfterCompaction: killed after a compaction's
// commit but before the log was emptied, the log's points are read back
// as the repeats they are.
func TestPendingLogReplayedAfterCompaction(t *testing.T) {
	st, path := openTemp(t)
	insert(t, st, track("adsb:R", "adsb", t0, time.Second, 50, 1, 1))
	logged, err := os.ReadFile(path + ".pending")
	if err != nil || len(logged) == 0 {
		t.Fatalf("pending log: %d bytes, %v", len(logged), err)
	}
	if err := st.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	kill(st)
	if err := os.WriteFile(path+".pending", logged, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := countOf(t, st, "adsb:R"); n != 50 {
		t.Fatalf("%d points, want the 50 once", n)
	}
	if fi, err := os.Stat(path + ".pending"); err != nil || fi.Size() != int64(len(pendingMagic)) {
		t.Fatalf("pending log after Open: %v, %v; want only its header", fi, err)
	}
}
