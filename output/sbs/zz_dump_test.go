package sbs

import (
	"os"
	"testing"
	"time"
)

func TestZZDump(t *testing.T) {
	out := os.Getenv("SBS_DUMP")
	if out == "" {
		t.Skip()
	}
	var all []byte
	for _, size := range []int{1, 7, 512} {
		var e MessageEncoder
		for i, m := range captureMsgs(t, size) {
			var err error
			all, err = e.AppendMsg(all, m, time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC).Add(time.Duration(i)*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
		}
		var s MessageEncoder
		for i, m := range captureMsgs(t, size) {
			if i%3 == 0 {
				_ = s.Track(m, time.Now())
				continue
			}
			all, _ = s.AppendMsg(all, m, time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC).Add(time.Duration(i)*time.Millisecond))
		}
	}
	var e MessageEncoder
	for i, m := range simMsgs(t, 30) {
		all, _ = e.AppendMsg(all, m, time.Unix(1_700_000_000, 0).Add(time.Duration(i)*10*time.Millisecond))
	}
	os.WriteFile(out, all, 0o644)
}
