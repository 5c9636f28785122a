package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stdin is standard input; tests replace it.
var stdin io.Reader = os.Stdin

// readInput reads a whole file, or standard input when path is "-" (the
// convention of every command that takes a file).
func readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

// oneStdin refuses more than one of the named inputs reading standard
// input ("-"): there is only one.
func oneStdin(inputs map[string]string) error {
	var dash []string
	for name, path := range inputs {
		if path == "-" {
			dash = append(dash, name)
		}
	}
	if len(dash) > 1 {
		sort.Strings(dash)
		return fmt.Errorf("only one input can be standard input (-); %s all are", strings.Join(dash, ", "))
	}
	return nil
}

// stdinFileFlags lets every FILE flag of fs read standard input ("-"),
// not only those whose code reads the input itself (--config and
// --alerts, readInput): the bytes are kept in an in-memory file whose path
// replaces "-", so every reader of the flag — a library that opens a path,
// a reload — finds them. At most one input is standard input.
func stdinFileFlags(fs *flag.FlagSet, configFile string) error {
	inputs := map[string]string{"--config": configFile}
	var dash *flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if kind, _ := flag.UnquoteUsage(f); kind != "FILE" || f.Name == "config" {
			return
		}
		v := f.Value.String()
		inputs["--"+f.Name] = v
		if v == "-" && f.Name != "alerts" {
			dash = f
		}
	})
	if err := oneStdin(inputs); err != nil || dash == nil {
		return err
	}
	b, err := readInput("-")
	if err == nil {
		var path string
		if path, err = memFile(dash.Name, b); err == nil {
			return dash.Value.Set(path)
		}
	}
	return fmt.Errorf("--%s -: %w", dash.Name, err)
}

// inputName names path in messages.
func inputName(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

// guessFormat names the replay format of a capture from its first bytes,
// then from its file name; "" when neither tells.
func guessFormat(path string, data []byte) string {
	if f := sniffFormat(data); f != "" {
		return f
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pcap", ".pcapng", ".cap":
		return "pcap"
	case ".tlog":
		return "tlog"
	case ".beast", ".bin":
		return "beast"
	case ".avr":
		return "avr"
	case ".hex":
		return "hex"
	}
	return ""
}

// sniffFormat recognises a capture by content: the pcap and pcapng magic
// numbers, a Beast record (0x1A then a type '1'..'4'), AVR text lines
// ('*', '@', '%' or '<' first, ';' last), a MAVLink telemetry log (an
// 8-byte timestamp in the years 2000-2100 then a v1 or v2 start byte) and
// lines of plain hex.
func sniffFormat(data []byte) string {
	if len(data) >= 4 {
		switch string(data[:4]) {
		case "\xd4\xc3\xb2\xa1", "\xa1\xb2\xc3\xd4", "\x4d\x3c\xb2\xa1", "\xa1\xb2\x3c\x4d", "\x0a\x0d\x0d\x0a":
			return "pcap"
		}
	}
	if len(data) >= 2 && data[0] == 0x1A && data[1] >= '1' && data[1] <= '4' {
		return "beast"
	}
	if isTlog(data) {
		return "tlog"
	}
	line := firstLine(data)
	switch {
	case line == "":
		return ""
	case strings.ContainsRune("*@%<", rune(line[0])) && strings.HasSuffix(line, ";"):
		return "avr"
	case isHex(line):
		return "hex"
	}
	return ""
}

// isTlog reports whether data starts like a telemetry log entry.
func isTlog(data []byte) bool {
	if len(data) < 9 || (data[8] != 0xFE && data[8] != 0xFD) {
		return false
	}
	var usec uint64
	for _, b := range data[:8] {
		usec = usec<<8 | uint64(b)
	}
	const y2000, y2100 = 946684800e6, 4102444800e6
	return usec >= y2000 && usec < y2100
}

// firstLine is the first line of data that is not empty or a # comment.
func firstLine(data []byte) string {
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if s := strings.TrimSpace(string(line)); s != "" && !strings.HasPrefix(s, "#") {
			return s
		}
	}
	return ""
}

func isHex(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
