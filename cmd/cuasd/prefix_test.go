package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestBadNATSURLSaysBusOnce: a --nats-url nobody answers fails the start
// with the component named once (issue 34: "bus: bus: connect").
func TestBadNATSURLSaysBusOnce(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--nats-url", "nats://127.0.0.1:1", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || strings.Count(err.Error(), "bus:") != 1 {
		t.Fatalf("error %v, want one bus: prefix", err)
	}
}
