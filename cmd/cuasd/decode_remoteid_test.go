package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

func TestDecodeRemoteIDHex(t *testing.T) {
	// loc_typical_airborne from the opendroneid-core-c vectors.
	var out, errOut bytes.Buffer
	err := runDecodeRemoteID(context.Background(), []string{"122624160a42bf241b6ed1b4b69808ac0870086b54150e0100"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Carrier  string           `json:"carrier"`
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Carrier != "message" || len(res.Messages) != 1 || res.Messages[0]["latitude_deg"] != 45.539309 ||
		res.Messages[0]["speed_horizontal_mps"] != 5.5 {
		t.Errorf("got %s", out.String())
	}
	err = runDecodeRemoteID(context.Background(), []string{"62262416fe42bf241b6ed1b4b69808ac0870086b54150e0100"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "byte 0: message type 0x6") {
		t.Errorf("undefined type: %v", err)
	}
}

// The wifi sample holds 21 beacon and 21 NAN Remote ID frames (SOURCES.md);
// the BT5 sample has 19 good-CRC count-0 packs and 28 recognisable frames
// with a bad CRC, which must come out as "error" lines.
func TestDecodeRemoteIDPcap(t *testing.T) {
	for _, c := range []struct {
		file           string
		lines, errored int
		transports     map[string]int
	}{
		{"odid_wifi_sample.pcap", 42, 0, map[string]int{"wifi_beacon": 21, "wifi_nan": 21}},
		{"odid_bt5_lr_sample.pcapng", 272, 19 + 28, map[string]int{"bt5": 272}},
	} {
		t.Run(c.file, func(t *testing.T) {
			var out, errOut bytes.Buffer
			path := testshared.Path(t, "data", "remoteid", c.file)
			if err := runDecodeRemoteID(context.Background(), []string{"--pcap", path}, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			lines, errored := 0, 0
			transports := map[string]int{}
			sc := bufio.NewScanner(&out)
			sc.Buffer(nil, 1<<20)
			prev := 0
			for sc.Scan() {
				var l struct {
					Frame     int     `json:"frame"`
					Transport string  `json:"transport"`
					Messages  []any   `json:"messages"`
					Warnings  []any   `json:"warnings"`
					Error     *string `json:"error"`
				}
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("line %d: %v", lines+1, err)
				}
				lines++
				transports[l.Transport]++
				if l.Frame <= prev || l.Messages == nil || l.Warnings == nil {
					t.Errorf("line %d: frame %d after %d, messages %v", lines, l.Frame, prev, l.Messages)
				}
				prev = l.Frame
				if l.Error != nil {
					errored++
				} else if len(l.Messages) == 0 {
					t.Errorf("frame %d: no messages and no error", l.Frame)
				}
			}
			if lines != c.lines || errored != c.errored || len(transports) != len(c.transports) {
				t.Errorf("%s: %d lines, %d errors, transports %v; want %d, %d, %v", c.file, lines, errored, transports, c.lines, c.errored, c.transports)
			}
			for k, v := range c.transports {
				if transports[k] != v {
					t.Errorf("%s: %s %d, want %d", c.file, k, transports[k], v)
				}
			}
		})
	}
}
