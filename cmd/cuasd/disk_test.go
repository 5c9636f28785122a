package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallFS mounts a tmpfs of size bytes for the test (root only: skipped
// with a message otherwise, a failure under CI=true, which runs as root).
func smallFS(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a %s tmpfs (CI runs as root): %v: %s", size, err, out)
		}
		t.Skipf("cannot mount a %s tmpfs (needs root): %v: %s", size, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillFS writes path until the filesystem is full.
func fillFS(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 256<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// metricSum is the sum of the samples of a metric family in an exposition.
func metricSum(body []byte, name string) float64 {
	var sum float64
	for _, l := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(l, name); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) {
			if v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// eventually polls cond every 200 ms until it holds or limit passes.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", limit, what)
		}
	}
}

type readyzBody struct {
	Status   string   `json:"status"`
	Degraded []string `json:"degraded"`
}

func readyz(t *testing.T, base string) readyzBody {
	t.Helper()
	_, b := get(t, base+"/readyz")
	var r readyzBody
	_ = json.Unmarshal(b, &r)
	return r
}

func putFence(t *testing.T, base, id string) *http.Response {
	t.Helper()
	body := `{"name":"Disk test","class":"airport","center":[52.30,4.76],"radius_m":300}`
	req, _ := http.NewRequest(http.MethodPut, base+"/v1/geofences/"+id, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestServeFullDiskRecovers runs the demo on a 40 MiB filesystem, fills
// it, and frees it (issue 32): while full /readyz is degraded naming both
// stores, writes are refused with 503 + Retry-After (a geofence is not
// acknowledged and then lost), the board is stale; once space returns,
// the pipeline resumes without a restart (before: the raw stream kept its
// write error and every publish went unanswered, so no observation was
// applied again), /readyz is ready and a geofence is kept.
func TestServeFullDiskRecovers(t *testing.T) {
	fs := smallFS(t, "40m")
	base, stop := startServe(t, "--demo", "--data-dir", filepath.Join(fs, "data"), "--disk-low-mark", "4MiB")
	defer stop()
	root := strings.TrimSuffix(base, "/api/cuas")
	applied := func() float64 {
		_, b := get(t, root+"/metrics")
		return metricSum(b, "cuasd_observations_applied_total")
	}
	eventually(t, 30*time.Second, "observations applied", func() bool { return applied() > 0 })

	fill := filepath.Join(fs, "fill")
	fillFS(t, fill)
	eventually(t, 10*time.Second, "/readyz degraded naming both stores", func() bool {
		r := readyz(t, base)
		d := strings.Join(r.Degraded, "\n")
		return r.Status == "degraded" && strings.Contains(d, "disk: data directory ") && strings.Contains(d, "disk: jetstream ")
	})
	resp := putFence(t, base, "disk-full")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("geofence PUT while full: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if r, _ := get(t, base+"/v1/geofences/disk-full"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("a refused geofence is there: %d", r.StatusCode)
	}
	var board struct {
		Stale bool `json:"stale"`
	}
	_, b := get(t, base+"/v1/threats/active")
	if err := json.Unmarshal(b, &board); err != nil || !board.Stale {
		t.Fatalf("board while full: %s", b)
	}
	_, m := get(t, root+"/metrics")
	if free, low := metricSum(m, `cuasd_disk_free_bytes{store="jetstream"}`), metricSum(m, `cuasd_disk_low_mark_bytes{store="jetstream"}`); free >= low || low != 4<<20 {
		t.Fatalf("free %v, low mark %v", free, low)
	}
	// Long enough for the demo's publishes to meet the full disk.
	time.Sleep(3 * time.Second)

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	freed := applied()
	eventually(t, 60*time.Second, "observations applied again after space returned", func() bool { return applied() > freed+50 })
	eventually(t, 30*time.Second, "/readyz ready", func() bool { return readyz(t, base).Status == "ready" })
	if resp := putFence(t, base, "disk-ok"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("geofence PUT after recovery: %d", resp.StatusCode)
	}
	_, b = get(t, base+"/v1/threats/active")
	if err := json.Unmarshal(b, &board); err != nil || board.Stale || !bytes.Contains(b, []byte(`"stale":false`)) {
		t.Fatalf("board after recovery: %.300s", b)
	}
}
