package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
)

// natsURLFile is the file in the data directory where cuasd serve writes
// the URL of its embedded NATS while it runs, so that cuasd replay and
// cuasd simulate find the cuasd that `make run` started (issue 34: they
// failed with "no servers available" when it listened elsewhere).
const natsURLFile = "nats.url"

// natsTarget is where replay and simulate publish, and why there.
type natsTarget struct {
	url, from string
}

// natsClientFlags are the flags replay and simulate share.
type natsClientFlags struct {
	url, dataDir string
}

func (n *natsClientFlags) register(fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	fs.StringVar(&n.url, "nats-url", "", "NATS `URL` of the running cuasd (default: CUAS_NATS_URL, else the URL the cuasd serving --data-dir wrote to its nats.url, else nats://127.0.0.1:4222)")
	fs.StringVar(&n.dataDir, "data-dir", "./data", "`DIR` of the running cuasd (as make run starts it), whose nats.url names its NATS")
}

// target resolves the NATS URL: the flag, CUAS_NATS_URL, the running
// cuasd's nats.url, the default listener.
func (n *natsClientFlags) target(getenv func(string) string) natsTarget {
	switch {
	case n.url != "":
		return natsTarget{n.url, "--nats-url"}
	case getenv("CUAS_NATS_URL") != "":
		return natsTarget{getenv("CUAS_NATS_URL"), "CUAS_NATS_URL"}
	}
	path := filepath.Join(n.dataDir, natsURLFile)
	if b, err := os.ReadFile(path); err == nil {
		if u := strings.TrimSpace(string(b)); u != "" {
			return natsTarget{u, path}
		}
	}
	return natsTarget{"nats://127.0.0.1:4222", "the default"}
}

// connect connects to t, naming on failure where the URL came from and
// how to give another.
func (t natsTarget) connect(name string) (*nats.Conn, error) {
	// A configured user reads its answers on its own inboxes (issue 32).
	nc, err := nats.Connect(t.url, nats.Name(name), bus.ClientInbox(t.url))
	if err != nil {
		return nil, fmt.Errorf("no cuasd NATS at %s (from %s): %w; start one with make run (or cuasd serve), or give --nats-url: "+
			"cuasd serve prints \"cuasd nats URL\" at start and writes it to DATA-DIR/nats.url (see --data-dir)", t.url, t.from, err)
	}
	return nc, nil
}

// writeNATSURL records the embedded NATS's client URL in the data
// directory while serve runs (removeNATSURL at stop).
func writeNATSURL(dataDir, url string) error {
	if url == "" {
		return nil
	}
	return os.WriteFile(filepath.Join(dataDir, natsURLFile), []byte(url+"\n"), 0o644)
}

// removeNATSURL removes the file at stop; a directory already gone or
// read-only leaves nothing to tidy.
func removeNATSURL(dataDir string) { _ = os.Remove(filepath.Join(dataDir, natsURLFile)) }
