package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
)

// subscriberEnv makes the test binary a plain NATS subscriber (what
// `nats sub 'cuas.>'` does): it prints each message as "subject<TAB>data"
// until its standard input closes. Running it as its own process proves
// the events are usable by any program on the bus, not only in-process.
const subscriberEnv = "CUASD_TEST_SUBSCRIBE"

func init() {
	url := os.Getenv(subscriberEnv)
	if url == "" {
		return
	}
	os.Exit(subscribe(url))
}

func subscribe(url string) int {
	nc, err := nats.Connect(url, nats.Name("events test subscriber"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	out := make(chan string, 1<<16)
	if _, err := nc.Subscribe("cuas.>", func(m *nats.Msg) {
		out <- m.Subject + "\t" + string(m.Data)
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := nc.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("subscribed")
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString(0)
		close(stdinClosed)
	}()
	w := bufio.NewWriter(os.Stdout)
	for {
		select {
		case line := <-out:
			fmt.Fprintln(w, line)
			if len(out) == 0 {
				w.Flush()
			}
		case <-stdinClosed:
			w.Flush()
			return 0
		}
	}
}

// busMessage is one line of the subscriber's output.
type busMessage struct {
	subject string
	data    []byte
}

// startSubscriber runs the test binary as a second process subscribed to
// cuas.> on natsURL; messages arrive on the returned channel.
func startSubscriber(t *testing.T, natsURL string) <-chan busMessage {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), subscriberEnv+"="+natsURL)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	if !sc.Scan() || sc.Text() != "subscribed" {
		t.Fatalf("subscriber did not start: %q %v", sc.Text(), sc.Err())
	}
	ch := make(chan busMessage, 1<<16)
	go func() {
		defer close(ch)
		for sc.Scan() {
			subj, data, _ := strings.Cut(sc.Text(), "\t")
			ch <- busMessage{subj, []byte(data)}
		}
	}()
	return ch
}

// TestEventsFromASecondProcess subscribes to cuas.> from another process
// while cuasd serve --demo runs, and checks what it hears against the API:
// every message on an event subject matches its schema and its subject,
// internal subjects are not readable by an anonymous client, and the
// latest track event of every live track agrees with /v1/tracks.
func TestEventsFromASecondProcess(t *testing.T) {
	base, natsURL, stop := startServeNATS(t, "--demo")
	defer stop()
	msgs := startSubscriber(t, natsURL)

	latest := map[string]events.Track{}
	kinds := map[string]int{}
	deadline := time.After(8 * time.Second)
collect:
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("subscriber ended early")
			}
			kind := checkEvent(t, m)
			kinds[kind]++
			if kind == "track" {
				var ev events.TrackEvent
				if err := json.Unmarshal(m.data, &ev); err != nil {
					t.Fatal(err)
				}
				latest[ev.Track.TrackID] = ev.Track
			}
		case <-deadline:
			break collect
		}
	}
	t.Logf("heard %v", kinds)
	if kinds["track"] == 0 || kinds["threat"] == 0 {
		t.Fatalf("no track or threat events in 8 s: %v", kinds)
	}
	if kinds["internal"] > 0 {
		t.Errorf("an anonymous client read %d messages on internal subjects", kinds["internal"])
	}
	compareWithAPI(t, base, latest)
}

// checkEvent validates one message and names its kind ("internal" for a
// subject outside the event subjects).
func checkEvent(t *testing.T, m busMessage) string {
	t.Helper()
	kind := eventstest.KindOf(m.subject)
	if kind == "" {
		for _, p := range bus.InternalPrefixes {
			if strings.HasPrefix(m.subject, p) {
				return "internal"
			}
		}
		return "other"
	}
	eventstest.Validate(t, m.subject, m.data)
	if kind == "track" {
		var ev events.TrackEvent
		if err := json.Unmarshal(m.data, &ev); err != nil {
			t.Fatal(err)
		}
		proto, key, ok := decode.SplitTrackID(ev.Track.TrackID)
		if !ok || m.subject != bus.TrackSubject(string(proto), key) {
			t.Errorf("track %s published on %s", ev.Track.TrackID, m.subject)
		}
	}
	return kind
}

// compareWithAPI checks every live track of /v1/tracks against the last
// event heard for it: same identity, and a position no further than the
// track can move between the event (at most about a second old, plus the
// keep-alive) and the request.
func compareWithAPI(t *testing.T, base string, latest map[string]events.Track) {
	t.Helper()
	_, body := get(t, base+"/v1/tracks")
	var out struct {
		Tracks []events.Track `json:"tracks"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tracks) == 0 {
		t.Fatal("no tracks in /v1/tracks")
	}
	recent := 0
	for _, tr := range out.Tracks {
		ev, ok := latest[tr.TrackID]
		if !ok {
			if time.Since(tr.FirstSeen) > 3*time.Second {
				t.Errorf("track %s (first seen %s) had no event", tr.TrackID, tr.FirstSeen)
			}
			continue
		}
		if ev.ICAO != tr.ICAO || ev.UASID != tr.UASID || strings.Join(ev.Protocols, ",") != strings.Join(tr.Protocols, ",") {
			t.Errorf("track %s: event identity %q/%q/%v, API %q/%q/%v", tr.TrackID, ev.ICAO, ev.UASID, ev.Protocols, tr.ICAO, tr.UASID, tr.Protocols)
		}
		if tr.Lat == nil || ev.Lat == nil || tr.SpeedMps == nil {
			continue
		}
		age := tr.LastSeen.Sub(ev.LastSeen).Seconds()
		if age < 0 {
			t.Errorf("track %s: event last_seen %s is after the API's %s", tr.TrackID, ev.LastSeen, tr.LastSeen)
		}
		moved := distanceM(*ev.Lat, *ev.Lon, *tr.Lat, *tr.Lon)
		if limit := (*tr.SpeedMps+50)*(age+1) + 50; moved > limit {
			t.Errorf("track %s: event position %.0f m from the API's (%.1f s apart, limit %.0f m)", tr.TrackID, moved, age, limit)
		}
		recent++
	}
	if recent == 0 {
		t.Error("no positioned track to compare")
	}
}

// distanceM is the great-circle distance in metres.
func distanceM(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371e3
	p1, p2 := lat1*math.Pi/180, lat2*math.Pi/180
	dp, dl := p2-p1, (lon2-lon1)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * r * math.Asin(math.Sqrt(a))
}
