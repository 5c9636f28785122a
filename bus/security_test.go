package bus

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func startListening(t *testing.T, users []User) *Bus {
	t.Helper()
	b, err := Start(context.Background(), Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Users: users,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	if err := b.EnsureStreams(context.Background(), DefaultLimits()); err != nil {
		t.Fatal(err)
	}
	return b
}

func connect(t *testing.T, b *Bus, opts ...nats.Option) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 16)
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	nc, err := nats.Connect(b.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

// canPublishRaw publishes a raw frame through JetStream and reports whether
// it was stored.
func canPublishRaw(t *testing.T, nc *nats.Conn) bool {
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := js.Publish(ctx, RawSubject("adsb", "t"), []byte{1})
	return err == nil
}

// canDeleteLedger tries the JetStream administration an attacker wants.
func canDeleteStream(t *testing.T, nc *nats.Conn) bool {
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return js.DeleteStream(ctx, StreamDead) == nil
}

// sees subscribes to cuas.> and reports which of an event and a raw frame,
// published by cuasd itself, reach the client.
func sees(t *testing.T, b *Bus, nc *nats.Conn) (event, raw bool) {
	sub, err := nc.SubscribeSync("cuas.>")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = nc.Flush()
	_ = b.Conn.Publish(RawSubject("adsb", "x"), []byte("raw"))
	_ = b.Conn.Publish(TrackSubject("adsb", "4CA1FA"), []byte("{}"))
	_ = b.Conn.Flush()
	for {
		m, err := sub.NextMsg(300 * time.Millisecond)
		if err != nil {
			return event, raw
		}
		event = event || m.Subject == TrackSubject("adsb", "4CA1FA")
		raw = raw || m.Subject == RawSubject("adsb", "x")
	}
}

func TestAnonymousLoopbackClientsAreLimited(t *testing.T) {
	b := startListening(t, nil)
	nc, _ := connect(t, b)
	if !canPublishRaw(t, nc) {
		t.Error("an anonymous sensor cannot publish raw frames")
	}
	if event, raw := sees(t, b, nc); !event || raw {
		t.Errorf("anonymous subscriber of cuas.>: event %v (want true), raw frame %v (want false)", event, raw)
	}
	if canDeleteStream(t, nc) {
		t.Fatal("an anonymous client deleted a JetStream stream")
	}
	if len(b.Ready(context.Background())) != 0 {
		t.Fatalf("not ready: %v", b.Ready(context.Background()))
	}
}

func TestConfiguredUsersHaveTheirRoles(t *testing.T) {
	b := startListening(t, []User{
		{Name: "rx1", Password: "sensor-password-1", Role: RoleSensor},
		{Name: "map", Password: "reader-password-1", Role: RoleReader},
		{Name: "ops", Password: "admin-password-01", Role: RoleAdmin},
	})
	if _, err := nats.Connect(b.ClientURL()); err == nil {
		t.Fatal("an anonymous client connected although users are configured")
	}
	sensor, _ := connect(t, b, nats.UserInfo("rx1", "sensor-password-1"), nats.CustomInboxPrefix(InboxPrefix("rx1")))
	reader, _ := connect(t, b, nats.UserInfo("map", "reader-password-1"))
	admin, _ := connect(t, b, nats.UserInfo("ops", "admin-password-01"))
	if !canPublishRaw(t, sensor) || canPublishRaw(t, reader) {
		t.Error("raw publishing: sensor must, reader must not")
	}
	if ev, _ := sees(t, b, reader); !ev {
		t.Error("the reader does not see events")
	}
	if ev, _ := sees(t, b, sensor); ev {
		t.Error("the sensor sees events")
	}
	if canDeleteStream(t, sensor) || canDeleteStream(t, reader) {
		t.Fatal("a sensor or reader administered JetStream")
	}
	if !canDeleteStream(t, admin) {
		t.Error("the admin cannot administer JetStream")
	}
}

func TestLoadUsers(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"ok", "- {user: rx1, password: 0123456789ab}\n- {user: m, password: 0123456789ab, role: reader}\n", ""},
		{"short password", "- {user: rx1, password: short}\n", "at least 12"},
		{"reserved name", "- {user: anonymous, password: 0123456789ab}\n", "name must be"},
		{"bad role", "- {user: a, password: 0123456789ab, role: root}\n", "role must be"},
		{"unknown key", "- {user: a, password: 0123456789ab, perms: all}\n", "not found"},
		{"shared inbox", "- {user: a.b, password: 0123456789ab}\n- {user: a_b, password: 0123456789ab}\n", "share the inbox prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			us, err := LoadUsers(p)
			if tc.err == "" {
				if err != nil || len(us) != 2 || us[0].Role != RoleSensor || us[1].Role != RoleReader {
					t.Fatalf("%+v %v", us, err)
				}
				return
			}
			if err == nil || !contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// TestClientInbox: the command-line clients take the inbox prefix of the
// user in their URL.
func TestClientInbox(t *testing.T) {
	for url, want := range map[string]string{
		"nats://rx1:pw@127.0.0.1:4222":                "_INBOX.rx1",
		"nats://rx1:pw@n1:4222,nats://rx1:pw@n2:4222": "_INBOX.rx1",
		"nats://127.0.0.1:4222":                       "",
		"":                                            "",
	} {
		var o nats.Options
		if err := ClientInbox(url)(&o); err != nil || o.InboxPrefix != want {
			t.Errorf("%q: prefix %q (%v), want %q", url, o.InboxPrefix, err, want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestPinnedTLS: the in-process connection accepts its own certificate and
// no other.
func TestPinnedTLS(t *testing.T) {
	cfg := pinnedTLS([]byte("own certificate"))
	if err := cfg.VerifyPeerCertificate([][]byte{[]byte("own certificate")}, nil); err != nil {
		t.Errorf("own certificate refused: %v", err)
	}
	for _, raw := range [][][]byte{nil, {[]byte("another certificate")}} {
		if err := cfg.VerifyPeerCertificate(raw, nil); err == nil {
			t.Errorf("certificate %q accepted", raw)
		}
	}
}

// TestExternalClusterPermissionsDocumented: the authorization block that
// docs/OPERATIONS.md gives for an external cluster grants receivers and
// event consumers exactly what Permissions grants them on the embedded
// server (issue 23, item 1). It had left out the single-frame intake
// (cuas.in.>): receivers could not use it, and viewers could read it.
func TestExternalClusterPermissionsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "OPERATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	block := func(from, to string) string {
		i := strings.Index(doc, from)
		if i < 0 {
			t.Fatalf("OPERATIONS.md has no %q", from)
		}
		j := strings.Index(doc[i:], to)
		if j < 0 {
			t.Fatalf("OPERATIONS.md: no %q after %q", to, from)
		}
		return strings.Join(strings.Fields(doc[i:i+j]), " ")
	}
	list := func(s []string) string { return `["` + strings.Join(s, `", "`) + `"]` }
	sensor, reader := Permissions(RoleSensor, "rx1"), Permissions(RoleReader, "viewer")
	rx := block("{user: rx1,", "{user: viewer")
	for _, want := range []string{"publish: {allow: " + list(sensor.Publish.Allow) + "}",
		"subscribe: {allow: " + list(sensor.Subscribe.Allow) + "}"} {
		if !strings.Contains(rx, want) {
			t.Errorf("receiver permissions %q lack %q", rx, want)
		}
	}
	compose, err := os.ReadFile(filepath.Join("..", "deploy", "compose", "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	rxCompose := Permissions(RoleSensor, "sensor")
	for _, want := range []string{"publish: { allow: " + list(rxCompose.Publish.Allow) + " }",
		"subscribe: { allow: " + list(rxCompose.Subscribe.Allow) + " }"} {
		if !strings.Contains(string(compose), want) {
			t.Errorf("deploy/compose/nats.conf: the sensor user lacks %q", want)
		}
	}
	viewer := block("{user: viewer,", "]\n  }")
	for _, want := range []string{"publish: {deny: " + list(reader.Publish.Deny) + "}",
		"subscribe: {allow: " + list(reader.Subscribe.Allow) + ", deny: " + list(reader.Subscribe.Deny) + "}"} {
		if !strings.Contains(viewer, want) {
			t.Errorf("viewer permissions %q lack %q", viewer, want)
		}
	}
}

// TestEmbeddedListenerBoundsConnections opens a thousand idle client
// connections to a listener limited to 100: nats-server refuses those past
// the limit ("maximum connections exceeded") instead of keeping every
// one, and a client is served again once they go (issue 23). Without a
// limit of its own the embedded server took 65,536.
func TestEmbeddedListenerBoundsConnections(t *testing.T) {
	b, err := Start(context.Background(), Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MaxConns: 100,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	addr := strings.TrimPrefix(b.ClientURL(), "nats://")
	served, refused := 0, 0
	var conns []net.Conn
	for range 1000 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		switch line := natsGreeting(t, c); {
		case strings.HasPrefix(line, "PONG"):
			served++
		case strings.Contains(line, "maximum connections exceeded"):
			refused++
		default:
			t.Fatalf("connection %d: %q", len(conns), line)
		}
	}
	if served > 100 || served < 90 || served+refused != 1000 {
		t.Errorf("%d served, %d refused; want at most 100 served", served, refused)
	}
	for _, c := range conns {
		c.Close()
	}
	nc, err := nats.Connect(b.ClientURL(), nats.RetryOnFailedConnect(true), nats.MaxReconnects(100), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Publish(RawPrefix+".adsb.test", []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Errorf("a client after the idle ones left: %v", err)
	}
}

// natsGreeting reads the server's INFO, sends CONNECT and PING and returns
// the line that answers them: PONG, or the -ERR of a refused connection.
func natsGreeting(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if _, err := c.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n")); err != nil {
		return "-ERR write: " + err.Error()
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "-ERR read: " + err.Error()
		}
		if !strings.HasPrefix(line, "INFO") {
			return line
		}
	}
}

// cuasdTraffic makes the requests and deliveries cuasd's own connection
// makes all the time: an acknowledged raw publish, a key-value put and get,
// an ordered consumer delivering raw frames, a plain request/reply. It
// fails the test when any of them does not work.
func cuasdTraffic(t *testing.T, b *Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js := b.JetStream()
	if _, err := js.Publish(ctx, &nats.Msg{Subject: RawSubject("adsb", "own"), Data: []byte("secret raw frame")}); err != nil {
		t.Fatalf("cuasd's own acknowledged publish: %v", err)
	}
	kv, err := b.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "CUAS_INBOX_TEST"})
	if err != nil {
		t.Fatalf("cuasd's own key-value bucket: %v", err)
	}
	if _, err := kv.Put(ctx, "k", []byte("secret kv entry")); err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "k"); err != nil || string(e.Value()) != "secret kv entry" {
		t.Fatalf("cuasd's own key-value get: %v", err)
	}
	got := make(chan struct{}, 1)
	stop, _, err := js.ConsumeFrom(ctx, StreamRaw, RawPrefix+".>", time.Now().Add(-time.Hour), func(m Msg) {
		select {
		case got <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatalf("cuasd's own consumer: %v", err)
	}
	defer stop()
	select {
	case <-got:
	case <-ctx.Done():
		t.Fatal("cuasd's own consumer delivered nothing")
	}
	sub, err := b.Conn.Subscribe("cuas.test.echo", func(m *nats.Msg) { _ = m.Respond([]byte("secret reply")) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if _, err := b.Conn.Request("cuas.test.echo", nil, 5*time.Second); err != nil {
		t.Fatalf("cuasd's own request/reply: %v", err)
	}
}

// sniff subscribes nc to every inbox and returns what it then collects
// while traffic runs, and whether the server refused the subscription.
func sniff(t *testing.T, nc *nats.Conn, errs chan error, traffic func()) (seen []string, refused bool) {
	t.Helper()
	for len(errs) > 0 {
		<-errs
	}
	ch := make(chan *nats.Msg, 1024)
	sub, err := nc.ChanSubscribe("_INBOX.>", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = nc.Flush()
	traffic()
	_ = nc.Flush()
	time.Sleep(200 * time.Millisecond) // let stragglers of traffic arrive; no timing is asserted
	for {
		select {
		case m := <-ch:
			seen = append(seen, m.Subject+" "+string(m.Data))
		case err := <-errs:
			refused = refused || strings.Contains(err.Error(), "Permissions Violation") || strings.Contains(err.Error(), "permissions violation")
		default:
			return seen, refused
		}
	}
}

// TestInboxesArePrivate (issue 32, item 3): a client subscribing to every
// inbox (`_INBOX.>`) read cuasd's consumer deliveries (raw frames), its
// key-value entries and JetStream answers, and other clients' acks. Now
// cuasd's replies go to InternalInboxPrefix, a configured user reads only
// its own inboxes (InboxPrefix), a reader has none; real clients on the
// embedded server check each role, and that cuasd's own requests still
// work.
func TestInboxesArePrivate(t *testing.T) {
	t.Run("anonymous", func(t *testing.T) {
		b := startListening(t, nil)
		nc, errs := connect(t, b)
		seen, _ := sniff(t, nc, errs, func() { cuasdTraffic(t, b) })
		if len(seen) != 0 {
			t.Errorf("an anonymous client read %d of cuasd's replies, first %q", len(seen), seen[0])
		}
		if !canPublishRaw(t, nc) {
			t.Error("an anonymous client cannot publish with acknowledgements any more")
		}
	})
	t.Run("users", func(t *testing.T) {
		b := startListening(t, []User{
			{Name: "rx1", Password: "sensor-password-1", Role: RoleSensor},
			{Name: "rx2", Password: "sensor-password-2", Role: RoleSensor},
			{Name: "map", Password: "reader-password-1", Role: RoleReader},
			{Name: "ops", Password: "admin-password-01", Role: RoleAdmin},
		})
		rx1, rx1errs := connect(t, b, nats.UserInfo("rx1", "sensor-password-1"), nats.CustomInboxPrefix(InboxPrefix("rx1")))
		rx2, _ := connect(t, b, nats.UserInfo("rx2", "sensor-password-2"), nats.CustomInboxPrefix(InboxPrefix("rx2")))
		reader, readerErrs := connect(t, b, nats.UserInfo("map", "reader-password-1"))
		admin, _ := connect(t, b, nats.UserInfo("ops", "admin-password-01"), nats.CustomInboxPrefix(InboxPrefix("ops")))
		traffic := func() {
			cuasdTraffic(t, b)
			if !canPublishRaw(t, rx2) {
				t.Error("sensor rx2 cannot publish with acknowledgements on its own inbox prefix")
			}
		}
		for name, c := range map[string]struct {
			nc   *nats.Conn
			errs chan error
		}{"sensor": {rx1, rx1errs}, "reader": {reader, readerErrs}} {
			seen, refused := sniff(t, c.nc, c.errs, traffic)
			if len(seen) != 0 || !refused {
				t.Errorf("%s subscribing to _INBOX.>: refused %v (want true), read %d replies %q", name, refused, len(seen), seen)
			}
		}
		if !canPublishRaw(t, rx1) || !canPublishRaw(t, admin) {
			t.Error("a sensor or admin cannot publish with acknowledgements on its own inbox prefix")
		}
		plain, _ := connect(t, b, nats.UserInfo("rx1", "sensor-password-1"))
		if canPublishRaw(t, plain) {
			t.Error("a sensor received acknowledgements on the shared _INBOX prefix")
		}
	})
}
