package bus

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestOversizeMessagesAreRefused (issue 32, item 3): 40 messages of 8 MB
// on cuas.raw.* were stored whole and took cuasd from 55 MB to 925 MB of
// memory. Now the embedded server takes no message over MaxMessageBytes
// from anyone: a nats.go publisher gets an error without sending, a client
// that sends anyway is answered -ERR and counted.
func TestOversizeMessagesAreRefused(t *testing.T) {
	var refused atomic.Int64
	b, err := Start(context.Background(), Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		OnOversize: func() { refused.Add(1) }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	nc, _ := connect(t, b)
	if nc.MaxPayload() != MaxMessageBytes {
		t.Errorf("the server's max_payload is %d, want %d", nc.MaxPayload(), MaxMessageBytes)
	}
	big := make([]byte, 2*MaxMessageBytes)
	if err := nc.Publish(RawSubject("adsb", "flood"), big); !errors.Is(err, nats.ErrMaxPayload) {
		t.Errorf("a nats.go publish of %d bytes: %v, want %v", len(big), err, nats.ErrMaxPayload)
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(b.ClientURL(), "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil { // INFO
		t.Fatal(err)
	}
	hdr := "CONNECT {\"verbose\":false}\r\nPUB " + RawSubject("adsb", "flood") + " " + strconv.Itoa(len(big)) + "\r\n"
	_, _ = c.Write([]byte(hdr))
	_, _ = c.Write(big) // the server may close the connection before reading it all
	line, _ := r.ReadString('\n')
	if !strings.Contains(line, "Maximum Payload Violation") {
		t.Errorf("a raw client sending %d bytes: %q", len(big), line)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("%d oversize messages counted, want 1", n)
	}
}

// TestStreamsRefuseOversizeMessages: on an external server whose
// max_payload is larger than MaxMessageBytes, CUAS_RAW refuses a larger
// message with an error to the publisher (JetStream's "message size
// exceeds maximum allowed") rather than storing it.
func TestStreamsRefuseOversizeMessages(t *testing.T) {
	srv, err := server.NewServer(&server.Options{JetStream: true, StoreDir: t.TempDir(), DontListen: true,
		NoSigs: true, NoLog: true, MaxPayload: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	b := &Bus{Conn: nc, JS: js}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.EnsureStreams(ctx, DefaultLimits()); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, RawSubject("adsb", "ok"), make([]byte, MaxBatchBytes)); err != nil {
		t.Errorf("a batch of MaxBatchBytes: %v", err)
	}
	_, err = js.Publish(ctx, RawSubject("adsb", "flood"), make([]byte, 8<<20-1024))
	if ErrorCode(err) != 10054 {
		t.Errorf("an 8 MB raw message: %v (code %d), want JetStream's 10054 message size exceeds maximum allowed", err, ErrorCode(err))
	}
}
