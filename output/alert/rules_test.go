package alert

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuasd/cuasd/gate"
)

func TestParseExample(t *testing.T) {
	c, err := Load("testdata/rules.yaml", []string{"demo-site", "other"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sinks) != 3 || len(c.Rules) != 2 {
		t.Fatalf("got %d sinks %d rules", len(c.Sinks), len(c.Rules))
	}
	hook, _ := c.Sink("hook")
	if string(hook.Secret) != "not-a-real-secret-test-only" || hook.TimeoutD != DefaultTimeout || hook.GiveUpD != DefaultGiveUp {
		t.Errorf("hook: secret %d bytes, timeout %v, give up %v", len(hook.Secret), hook.TimeoutD, hook.GiveUpD)
	}
	if chat, _ := c.Sink("chat"); chat.GiveUpD != time.Hour || chat.Format != "slack" {
		t.Errorf("chat: %+v", chat)
	}
	r := c.Rules[0]
	if r.Min != gate.Alert || r.CooldownD != time.Minute || r.Zones[0] != "demo-site" {
		t.Errorf("rule: %+v", r)
	}
	if c.Rules[1].Min != gate.InterceptRecommended || c.Rules[1].CooldownD != DefaultCooldown {
		t.Errorf("rule 2: %+v", c.Rules[1])
	}
}

func TestParseErrorsNameLineAndKey(t *testing.T) {
	base := "sinks:\n  - name: hook\n    webhook: https://example.org/x\nrules:\n  - name: r\n    sinks: [hook]\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top key", "sink: []\n" + base, "f.yaml:1: sink: unknown key"},
		{"unknown rule key", base + "    cooldwn: 5s\n", `f.yaml:7: rules[0].cooldwn: unknown key "cooldwn"`},
		{"bad duration", base + "    cooldown: 5x\n", `f.yaml:7: rules[0].cooldown: "5x" is not a positive duration`},
		{"unknown sink", strings.Replace(base, "[hook]", "[hook, pager]", 1), `f.yaml:6: rules[0].sinks[1]: unknown sink "pager"`},
		{"bad decision", base + "    min_decision: panic\n", "f.yaml:7: rules[0].min_decision: min_decision must be"},
		{"bad url", strings.Replace(base, "https://example.org/x", "ftp://x", 1), "f.yaml:3: sinks[0].webhook: webhook must be an http"},
		{"credentials in url", strings.Replace(base, "https://", "https://u:p@", 1), "must not carry credentials"},
		{"both kinds", strings.Replace(base, "    webhook", "    mqtt: true\n    webhook", 1), "either a webhook or mqtt"},
		{"duplicate sink", strings.Replace(base, "rules:", "  - name: hook\n    mqtt: true\nrules:", 1), `sink "hook" is defined twice`},
		{"no rules", "sinks: []\nrules: []\n", "no rules"},
		{"wrong type", base + "    swarm_min: many\n", "f.yaml:7"},
		{"not yaml", "sinks: [\n", "f.yaml:1: did not find expected node content"},
		{"bad format", strings.Replace(base, "/x\n", "/x\n    format: teams\n", 1), `format must be cuas or slack, got "teams"`},
		{"lambda range", base + "    min_lambda: 2\n", "min_lambda must be within 0..1"},
		// Issue 32: a miscased or unknown protocol was accepted and the rule never fired.
		{"miscased protocol", base + "    protocols: [adsb, remoteID]\n", `f.yaml:7: rules[0].protocols[1]: unknown protocol "remoteID": want one of adsb, remoteid, mavlink, dji`},
		{"unknown protocol", base + "    protocols:\n      - lora\n", `f.yaml:8: rules[0].protocols[0]: unknown protocol "lora"`},
		{"unknown class", base + "    classes: [drone, ufo]\n", `f.yaml:7: rules[0].classes[1]: unknown class "ufo" (known: aircraft, drone, unknown)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("%T is not *alert.Error", err)
			}
		})
	}
}

func TestResolveZonesAndSecrets(t *testing.T) {
	c, err := Parse("f.yaml", []byte("sinks:\n  - name: h\n    webhook: http://x/\n    secret_file: /nonexistent/secret\nrules:\n  - name: r\n    zones: [nowhere]\n    sinks: [h]\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Resolve("f.yaml", []string{"demo-site"}, nil)
	// Each names its file and line (issue 32).
	for _, want := range []string{`f.yaml:7: rules[0].zones: unknown zone "nowhere" (known: demo-site)`, "f.yaml:4: sinks[0].secret_file: cannot read the secret file"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// TestSecretFileMustBeASmallRegularFile (issue 32): secret_file:
// /dev/zero was read without limit (1.8 GB, SIGTERM ignored); a device,
// a FIFO (whose open would block) or a directory now fails at once, as
// does a regular file over MaxSecretFile.
func TestSecretFileMustBeASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/dev/zero": "device, not a regular file", fifo: "FIFO, not a regular file",
		dir: "directory, not a regular file", big: "at most 4096"} {
		c, err := Parse("f.yaml", []byte("sinks:\n  - name: h\n    webhook: http://x/\n    secret_file: "+path+"\nrules:\n  - name: r\n    sinks: [h]\n"))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Resolve("f.yaml", nil, nil)
		if err == nil || !strings.Contains(err.Error(), "f.yaml:4: sinks[0].secret_file") || !strings.Contains(err.Error(), want) {
			t.Errorf("secret_file %s: %v, want %q", path, err, want)
		}
	}
}

func TestResolveNeverPrintsTheSecret(t *testing.T) {
	big := strings.Repeat("s3cr3t", MaxSecretFile)
	c, _ := Parse("f.yaml", []byte("sinks:\n  - name: h\n    webhook: http://x/\n    secret_file: k\nrules:\n  - name: r\n    sinks: [h]\n"))
	err := c.Resolve("f.yaml", nil, func(string) ([]byte, error) { return []byte(big), nil })
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/rules.yaml")
	f.Add(b)
	f.Add([]byte("sinks: [{name: a, mqtt: true}]\nrules: [{name: r, sinks: [a], cooldown: 1s}]"))
	f.Add([]byte("rules:\n  - name: r\n    zones: [[x]]\n"))
	f.Add([]byte("- 1\n- 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v is not an *alert.Error", err, err)
			}
			return
		}
		// Whatever parses is usable: every rule names known sinks and has a
		// positive cooldown.
		for _, r := range c.Rules {
			if r.CooldownD <= 0 {
				t.Fatalf("rule %q cooldown %v", r.Name, r.CooldownD)
			}
			for _, s := range r.Sinks {
				if _, ok := c.Sink(s); !ok {
					t.Fatalf("rule %q names unknown sink %q", r.Name, s)
				}
			}
		}
	})
}
