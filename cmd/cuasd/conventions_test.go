package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/ledger"
)

// helpCommands is every command and subcommand of cuasd.
var helpCommands = [][]string{
	{"serve"}, {"decode"}, {"decode", "adsb"}, {"decode", "remoteid"}, {"decode", "mavlink"},
	{"replay"}, {"simulate"}, {"verify"}, {"token"}, {"token", "new"}, {"version"},
}

// helpCommands holds every command the top-level usage lists (so a new
// command cannot miss the help test), and `cuasd help COMMAND` prints the
// same usage as `cuasd COMMAND --help` (issue 24, item 5).
func TestHelpCommandsAreEveryCommand(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range helpCommands {
		listed[strings.Join(c, " ")] = true
	}
	re := regexp.MustCompile(`(?m)^  cuasd ([a-z]+)(?: ([a-z]+)\b)?`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(usage, -1) {
		n++
		name := m[1]
		if m[2] != "" && (m[1] == "decode" || m[1] == "token") {
			name += " " + m[2]
		}
		if !listed[name] {
			t.Errorf("usage lists cuasd %s, which helpCommands lacks", name)
		}
	}
	if n < 8 {
		t.Fatalf("found %d commands in the usage", n)
	}
	for _, c := range helpCommands {
		var viaFlag, viaHelp bytes.Buffer
		errFlag := run(context.Background(), append(c[:len(c):len(c)], "--help"), os.Getenv, &viaFlag, io.Discard)
		errHelp := run(context.Background(), append([]string{"help"}, c...), os.Getenv, &viaHelp, io.Discard)
		if errFlag != nil || errHelp != nil || viaHelp.String() != viaFlag.String() {
			t.Errorf("cuasd help %s (%v) differs from cuasd %s --help (%v):\n%s", strings.Join(c, " "), errHelp,
				strings.Join(c, " "), errFlag, viaHelp.String())
		}
	}
}

var (
	flagLineRE = regexp.MustCompile(`^  -([a-z0-9-]+)(?: (.*))?$`)
	docRefRE   = regexp.MustCompile(`[A-Za-z0-9_./-]+\.md\b`)
)

// --help and -h on every command print its usage on stdout and succeed;
// flag value names read as names (FILE, HOST:PORT), never Go's type names
// or a phrase; the help names no file the repository does not hold
// (issue 24, item 5).
func TestHelpOnEveryCommand(t *testing.T) {
	for _, cmd := range helpCommands {
		for _, h := range []string{"--help", "-h"} {
			name := strings.Join(append(cmd[:len(cmd):len(cmd)], h), " ")
			t.Run(name, func(t *testing.T) {
				var out, errb bytes.Buffer
				err := run(context.Background(), append(cmd[:len(cmd):len(cmd)], h), func(string) string { return "" }, &out, &errb)
				if err != nil {
					t.Fatalf("exit error %v (stderr %q)", err, errb.String())
				}
				help := out.String()
				if !strings.HasPrefix(help, "Usage:\n") || !strings.Contains(help, "cuasd "+strings.Join(cmd, " ")) {
					t.Errorf("stdout is not the usage of %q:\n%s", strings.Join(cmd, " "), help)
				}
				if errb.Len() != 0 {
					t.Errorf("stderr %q, want nothing", errb.String())
				}
				checkHelpText(t, help)
			})
		}
	}
}

func checkHelpText(t *testing.T, help string) {
	t.Helper()
	for _, line := range strings.Split(help, "\n") {
		m := flagLineRE.FindStringSubmatch(line)
		if m == nil || m[2] == "" {
			continue
		}
		switch v := m[2]; {
		case strings.Contains(v, " "):
			t.Errorf("-%s: value name %q is a phrase", m[1], v)
		case v == "string" || v == "value" || v == "int" || v == "uint" || v == "float" || v == "duration":
			t.Errorf("-%s: value name is Go's type name %q; name the value (`FILE`, `N`...)", m[1], v)
		}
	}
	for _, ref := range docRefRE.FindAllString(help, -1) {
		if _, err := os.Stat(filepath.Join("..", "..", ref)); err != nil {
			t.Errorf("help names %s, which is not in the repository", ref)
		}
	}
}

// The top-level help is also the answer to `cuasd help`.
func TestTopLevelHelp(t *testing.T) {
	for _, h := range []string{"help", "--help", "-h"} {
		t.Run(h, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), []string{h}, func(string) string { return "" }, &out, &out); err != nil {
				t.Fatalf("%s: %v", h, err)
			}
			checkHelpText(t, out.String())
		})
	}
}

// A capture with no valid frame for its format is an error, not
// "replayed 0 frames" and exit 0 (issue 24, item 4).
func TestReplayWithoutValidFrameFails(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.avr")
	if err := os.WriteFile(junk, []byte("this is not a capture\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"avr", "beast", "tlog"} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), []string{"replay", junk, "--format", format, "--nats-url", "nats://127.0.0.1:1", "--max"},
				func(string) string { return "" }, &out, &out)
			if err == nil || !strings.Contains(err.Error(), "no valid "+format+" frame in "+junk) {
				t.Errorf("--format %s: err %v, want no valid %s frame", format, err, format)
			}
		})
	}
}

// Without --format, replay recognises the capture (issue 24, item 4).
func TestGuessFormat(t *testing.T) {
	tlog := append([]byte{0x00, 0x05, 0x8b, 0x3c, 0x9e, 0x1a, 0x2f, 0x00}, 0xFE, 9, 0, 1, 1, 0)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"x", []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0}, "pcap"},
		{"x", []byte{0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0}, "pcap"},
		{"x", []byte{0x1a, '3', 0, 0, 0, 0, 0, 1, 0xa0, 0x8d, 0x40}, "beast"},
		{"x", []byte("*8D4840D6202CC371C32CE0576098;\n"), "avr"},
		{"x", []byte("@0000A1B2C3D48D4840D6202CC371C32CE0576098;\n"), "avr"},
		{"x", tlog, "tlog"},
		{"x", []byte("# frames\n8D4840D6202CC371C32CE0576098\n"), "hex"},
		{"capture.pcapng", []byte("??"), "pcap"},
		{"flight.tlog", []byte("??"), "tlog"},
		{"dump.bin", []byte("??"), "beast"},
		{"x", []byte("hello"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := guessFormat(c.name, c.data); got != c.want {
				t.Errorf("guessFormat(%q, %q) = %q, want %q", c.name, c.data, got, c.want)
			}
		})
	}
}

// `cuasd verify -` reads the bundle from standard input (issue 24, item 4).
func TestVerifyReadsStdin(t *testing.T) {
	f := newVerifyFixture(t)
	b, err := os.ReadFile(f.bundle)
	if err != nil {
		t.Fatal(err)
	}
	setStdin(t, b)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"verify", "-", "--pubkey", f.pub}, os.Getenv, &out, &errb); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "verified: entry 2") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

// Every file input of `cuasd verify`, not only the bundle, may be - for
// standard input, one at a time (issue 24, item 4).
func TestVerifyFileFlagsReadStdin(t *testing.T) {
	f := newVerifyFixture(t)
	full := []string{f.bundle, "--pubkey", f.pub, "--checkpoint", f.cpLater, "--consistency", f.cons}
	for _, at := range []int{0, 2, 4, 6} { // the bundle, then each flag's value
		args := append([]string{"verify"}, full...)
		b, err := os.ReadFile(args[at+1])
		if err != nil {
			t.Fatal(err)
		}
		args[at+1] = "-"
		setStdin(t, b)
		var out bytes.Buffer
		if err := run(context.Background(), args, os.Getenv, &out, &out); err != nil || !strings.Contains(out.String(), "verified: entry 2") {
			t.Errorf("%v: %v\n%s", args, err, out.String())
		}
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"verify", "-", "--pubkey", "-"}, os.Getenv, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "only one input can be standard input") {
		t.Errorf("two inputs on standard input: %v", err)
	}
}

// cuasd serve reads --config - and --alerts - from standard input, one of
// them at a time (issue 24, item 4).
func TestServeConfigAndAlertsFromStdin(t *testing.T) {
	setStdin(t, []byte("http-addr: 127.0.0.1:18080\ntrack-ttl: 42s\n"))
	c, err := parseConfig([]string{"--config", "-"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:18080" || time.Duration(c.TrackTTL) != 42*time.Second {
		t.Errorf("--config - gave http-addr %q, track-ttl %v", c.HTTPAddr, time.Duration(c.TrackTTL))
	}

	setStdin(t, []byte("sinks:\n  - name: hook\n    webhook: https://example.org/cuas\nrules:\n  - name: any\n    sinks: [hook]\n"))
	c, err = parseConfig([]string{"--alerts", "-"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.rules == nil || len(c.rules.Rules) != 1 || c.rules.Rules[0].Name != "any" {
		t.Errorf("--alerts - gave rules %+v", c.rules)
	}

	setStdin(t, []byte("cooldown: [\n")) // a bad rule file is named as standard input
	if _, err = parseConfig([]string{"--alerts", "-"}, func(string) string { return "" }, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "standard input") {
		t.Errorf("bad --alerts -: %v", err)
	}
	setStdin(t, nil)
	_, err = parseConfig([]string{"--config", "-", "--alerts", "-"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "only one input can be standard input") {
		t.Errorf("--config - --alerts -: %v", err)
	}
}

func setStdin(t *testing.T, b []byte) {
	t.Helper()
	old := stdin
	stdin = bytes.NewReader(b)
	t.Cleanup(func() { stdin = old })
}

// Every shared capture is recognised from its content alone, as when it
// comes on standard input.
func TestGuessFormatOfSharedCaptures(t *testing.T) {
	for _, c := range []struct{ dir, file, want string }{
		{"adsb", "traffic_sample_dump1090.beast.bin", "beast"},
		{"adsb", "beastblackbox_ulss7_2018-04-03.beast.bin", "beast"},
		{"adsb", "vector_frames.avr", "avr"},
		{"mavlink", "ardusub_small.tlog", "tlog"},
		{"mavlink", "uavlogviewer_vtol.tlog", "tlog"},
		{"remoteid", "odid_wifi_sample.pcap", "pcap"},
		{"remoteid", "odid_bt5_lr_sample.pcapng", "pcap"},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(testshared.Path(t, "data", c.dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := guessFormat("-", b); got != c.want {
				t.Errorf("%s: %q, want %q", c.file, got, c.want)
			}
		})
	}
}

// `cuasd replay -` reads the capture from standard input and recognises
// its format; `cuasd decode remoteid --pcap -` reads standard input too
// (issue 24, item 4).
func TestReplayAndDecodeFromStdin(t *testing.T) {
	beast, err := os.ReadFile(testshared.Path(t, "data", "adsb", "traffic_sample_dump1090.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	pcapData, err := os.ReadFile(testshared.Path(t, "data", "remoteid", "odid_wifi_sample.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("decode remoteid --pcap -", func(t *testing.T) {
		setStdin(t, pcapData)
		var out bytes.Buffer
		if err := run(context.Background(), []string{"decode", "remoteid", "--pcap", "-"}, os.Getenv, &out, &out); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "\n"); n != 42 {
			t.Errorf("%d lines, want 42 (as from the file)", n)
		}
	})
	t.Run("decode remoteid --pcap of a capture without Remote ID", func(t *testing.T) {
		setStdin(t, []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0})
		var out bytes.Buffer
		err := run(context.Background(), []string{"decode", "remoteid", "--pcap", "-"}, os.Getenv, &out, &out)
		if err == nil || !strings.Contains(err.Error(), "no Remote ID frame in standard input") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("replay -", func(t *testing.T) {
		_, natsURL, stop := startServeNATS(t)
		defer stop()
		setStdin(t, beast)
		var out bytes.Buffer
		if err := run(context.Background(), []string{"replay", "-", "--nats-url", natsURL, "--max"}, func(string) string { return "" }, &out, &out); err != nil {
			t.Fatal(err)
		}
		// "already stored": what the count is (a retried replay's frames
		// JetStream kept before); "duplicates" read as the capture's own
		// repeated frames, which cuasd drops and counts itself.
		if !regexp.MustCompile(`^replayed [1-9][0-9]* frames \(0 already stored\) of beast from standard input`).MatchString(out.String()) {
			t.Errorf("stdout %q", out.String())
		}
	})
}

// `cuasd verify` names the log it checked and, when a bundle does not
// verify, which checks failed; a payload that is readable but altered
// fails the signature over the DSSE PAE, it is not "unreadable"
// (issue 24, items 7 and 8).
func TestVerifySaysWhichCheckFailed(t *testing.T) {
	f := newVerifyFixture(t)
	b, err := os.ReadFile(f.bundle)
	if err != nil {
		t.Fatal(err)
	}
	var r ledger.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	origin, _, _, err := ledger.ParseCheckpoint([]byte(r.Checkpoint))
	if err != nil {
		t.Fatal(err)
	}
	// The predicate's decision changed, the subject digest left alone.
	payload, _ := base64.StdEncoding.DecodeString(r.Envelope.Payload)
	altered := bytes.Replace(payload, []byte(`"decision":"monitor"`), []byte(`"decision":"engage!"`), 1)
	if bytes.Equal(altered, payload) {
		t.Fatalf("fixture payload has no decision to alter: %s", payload)
	}
	r.Envelope.Payload = base64.StdEncoding.EncodeToString(altered)
	tampered := filepath.Join(f.dir, "altered.json")
	b, _ = json.Marshal(r)
	if err := os.WriteFile(tampered, b, 0o600); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"verify", f.bundle, "--pubkey", f.pub}, os.Getenv, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "in the log "+origin+" at tree size") {
		t.Errorf("the log's origin %s is not shown:\n%s", origin, out.String())
	}

	out.Reset()
	err = run(context.Background(), []string{"verify", tampered, "--pubkey", f.pub}, os.Getenv, &out, &out)
	got := out.String()
	if !errors.Is(err, errSilent) {
		t.Fatalf("err %v, want a reported failure:\n%s", err, got)
	}
	for _, want := range []string{
		"FAIL  envelope signature",
		"over the DSSE PAE does not verify",
		"FAIL  statement",
		"FAIL  inclusion",
		"failed: statement, leaf hash, inclusion, envelope signature",
		"(log " + origin + ")",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "unreadable") {
		t.Errorf("a readable payload is called unreadable:\n%s", got)
	}
}

// An address already in use fails the start at once with an error that
// names the address, says it is in use and names the flag that changes it:
// for HTTP, the embedded NATS listener and monitor, and every adapter
// listener (issue 24, item 6). The 5 s guard only catches the old
// behaviour ("not ready within 10s"); the start fails in milliseconds.
func TestServePortInUse(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	busyTCP, busyUDP := tcp.Addr().String(), udp.LocalAddr().String()
	for _, c := range []struct{ flag, addr string }{
		{"--http-addr", busyTCP},
		{"--nats-listen", busyTCP},
		{"--nats-monitor", busyTCP},
		{"--beast-listen", busyTCP},
		{"--avr-listen", busyTCP},
		{"--mavlink-udp", busyUDP},
		{"--sbs-listen", busyTCP},       // issue 21
		{"--beast-out-listen", busyTCP}, // issue 21
		{"--json-udp", busyUDP},         // issue 25
	} {
		t.Run(c.flag, func(t *testing.T) {
			args := []string{"serve", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0",
				"--log-level", "error", c.flag, c.addr}
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				done <- run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
			}()
			select {
			case err := <-done:
				t.Logf("failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
				if err == nil {
					t.Fatal("serve started on an address in use")
				}
				for _, want := range []string{c.flag + " " + c.addr, "already in use", "choose another address with " + c.flag} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
			case <-time.After(5 * time.Second):
				t.Fatal("serve neither started nor failed: it waits instead of failing at once")
			}
		})
	}
}

// The process itself exits with status 1 and says why on stderr when a
// second cuasd serve finds its HTTP address taken by the first.
func TestSecondServeExitsNonZero(t *testing.T) {
	base, stop := startServe(t)
	defer stop()
	addr := strings.TrimPrefix(strings.TrimSuffix(base, "/api/cuas"), "http://")
	// TestMain (crash_test.go) runs main for CUASD_TEST_AS_MAIN=1.
	cmd := exec.Command(os.Args[0], "serve", "--data-dir", t.TempDir(), "--nats-listen", "off", "--http-addr", addr)
	cmd.Env = append(os.Environ(), "CUASD_TEST_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	if want := "--http-addr " + addr + ": the address is already in use"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}

// `make run RUNARGS=...` adds flags to the demo, it does not replace
// --demo; DEMO= turns the demo off (issue 24, item 10).
func TestMakeRunKeepsDemo(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("make is required under CI=true")
		}
		t.Skip("make is not installed")
	}
	root := filepath.Join("..", "..")
	for _, c := range []struct {
		vars []string
		want string
	}{
		{nil, "serve --demo"},
		{[]string{"RUNARGS=--http-addr 127.0.0.1:9090"}, "serve --demo --http-addr 127.0.0.1:9090"},
		{[]string{"DEMO=", "RUNARGS=--beast-listen :30004"}, "serve --beast-listen :30004"},
	} {
		t.Run(c.want, func(t *testing.T) {
			out, err := exec.Command(makeBin, append([]string{"-n", "-C", root, "run"}, c.vars...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("make -n run %v: %v\n%s", c.vars, err, out)
			}
			ran := false
			for _, line := range strings.Split(string(out), "\n") {
				ran = ran || strings.Join(strings.Fields(line), " ") == "./bin/cuasd "+c.want
			}
			if !ran {
				t.Errorf("make run %v runs:\n%s\nwant bin/cuasd %s", c.vars, out, c.want)
			}
		})
	}
}

// Size defaults read as sizes in --help ("256MiB", not 268435456) and read
// back as the same value.
func TestByteSizeStringRoundTrips(t *testing.T) {
	for _, v := range []int64{256 << 20, 4 << 30, 1 << 10, 1000, 0} {
		b := byteSize(v)
		var back byteSize
		if err := back.Set(b.String()); err != nil || back != b {
			t.Errorf("%d prints %q, which reads back as %d (%v)", v, b.String(), back, err)
		}
	}
	if b := byteSize(256 << 20); b.String() != "256MiB" {
		t.Errorf("256 MiB prints %q", b.String())
	}
}

// Every FILE flag of serve reads standard input with "-" (issue 24, item
// 4), also those whose file a library or a reload opens by path: a token
// file on standard input guards the API as the same file on disk does, and
// two flags cannot both read it.
func TestServeFileFlagsReadStdin(t *testing.T) {
	secret, entry := newOperatorToken(t)
	setStdin(t, entry)
	base, stop := startServe(t, "--auth-tokens", "-")
	defer stop()
	checkTokenGuards(t, base, secret)

	setStdin(t, nil)
	_, err := parseConfig([]string{"--signing-key", "-", "--auth-tokens", "-"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--auth-tokens, --signing-key all are") {
		t.Errorf("--signing-key - --auth-tokens -: %v", err)
	}
	_, err = parseConfig([]string{"--tls-cert", "-", "--alerts", "-"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "only one input can be standard input") {
		t.Errorf("--tls-cert - --alerts -: %v", err)
	}
}
