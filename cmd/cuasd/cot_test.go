package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestCoTConfig(t *testing.T) {
	f := t.TempDir() + "/c.yaml"
	if err := writeFile(f, "cot-udp: [\"239.2.3.1:6969\", \"127.0.0.1:4242\"]\ntak-server: tcp://127.0.0.1:8087\ncot-ttl: 4\n"); err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	c, err := parseConfig([]string{"--config", f}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.CoTUDP.vals, []string{"239.2.3.1:6969", "127.0.0.1:4242"}) || !slices.Equal(c.TAKServer.vals, []string{"tcp://127.0.0.1:8087"}) || c.CoTTTL != 4 {
		t.Fatalf("file: %+v", c.CoTFlags)
	}
	// Flags replace the file's list and repeat.
	c, err = parseConfig([]string{"--config", f, "--cot-udp", "127.0.0.1:1", "--cot-udp", "udp://127.0.0.1:2?protocol=1"}, none, io.Discard)
	if err != nil || !slices.Equal(c.CoTUDP.vals, []string{"127.0.0.1:1", "udp://127.0.0.1:2?protocol=1"}) {
		t.Fatalf("flags: %v %+v", err, c.CoTUDP)
	}
	env := map[string]string{"CUAS_TAK_SERVER": "tcp://a:1,tcp://b:2", "CUAS_TAK_P12_PASSWORD": "s3cret"}
	c, err = parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || !slices.Equal(c.TAKServer.vals, []string{"tcp://a:1", "tcp://b:2"}) || c.TAKP12Password != "s3cret" {
		t.Fatalf("env: %v %+v", err, c.CoTFlags)
	}
}

func TestCoTConfigErrorsNameTheFlag(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tak-server", "https://tak:8443"}, "--tak-server"},
		{[]string{"--tak-server", "ssl://tak"}, "--tak-server"},
		{[]string{"--tak-server", "tcp://tak:8087?protocol=9"}, "--tak-server"},
		{[]string{"--cot-udp", "nowhere"}, "--cot-udp"},
		{[]string{"--cot-udp", "udp://127.0.0.1:6969?protocol=7"}, "--cot-udp"},
		{[]string{"--cot-ttl", "0"}, "--cot-ttl"},
		{[]string{"--tak-server", "ssl://tak:8089", "--tak-cert", "/nonexistent.pem", "--tak-key", "/nonexistent.key"}, "--tak-cert"},
		{[]string{"--tak-server", "ssl://tak:8089", "--tak-ca", "/nonexistent-ca.pem"}, "--tak-ca"},
		{[]string{"--tak-server", "ssl://tak:8089", "--tak-p12", "/nonexistent.p12"}, "--tak-p12"},
		{[]string{"--tak-server", "ssl://tak:8089", "--tak-p12", "x.p12", "--tak-p12-password-file", "/nonexistent"}, "--tak-p12-password-file"},
		{[]string{"--tak-cert", "c.pem"}, "need a --tak-server"},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, err := parseConfig(c.args, none, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
			}
		})
	}
}
