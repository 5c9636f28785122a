// Command goldengen computes the reference frame counts of the shared
// MAVLink telemetry logs with an independent parser, gomavlib v3 (its tlog
// reader and its ardupilotmega dialect, which includes common, standard and
// minimal), and writes them as golden JSON files. It is run by hand, once:
//
//	go run ./decode/mavlink/internal/goldengen -shared ../shared -out decode/mavlink/testdata/golden
//
// None of this repository's MAVLink code is used here, on purpose: the golden
// files are the yardstick the package's own parser is measured against.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/bluenviron/gomavlib/v3/pkg/dialect"
	"github.com/bluenviron/gomavlib/v3/pkg/dialects/ardupilotmega"
	"github.com/bluenviron/gomavlib/v3/pkg/frame"
	"github.com/bluenviron/gomavlib/v3/pkg/message"
	"github.com/bluenviron/gomavlib/v3/pkg/tlog"
)

// Golden is the reference summary of one tlog.
type Golden struct {
	File       string `json:"file"`
	Source     string `json:"source"`
	Parser     string `json:"parser"`
	Entries    int    `json:"entries"`
	FirstUsec  int64  `json:"first_usec"`
	LastUsec   int64  `json:"last_usec"`
	V1Frames   int    `json:"v1_frames"`
	V2Frames   int    `json:"v2_frames"`
	GoodFrames int    `json:"good_frames"`
	// ByName counts frames whose CRC verified, by message name.
	ByName map[string]int `json:"by_name"`
	// ByMsgID is ByName keyed by message id.
	ByMsgID map[string]int `json:"by_msgid"`
	// Unknown counts frames whose id the dialect lacks (CRC unverifiable).
	Unknown map[string]int `json:"unknown_by_msgid"`
	// BadCRC counts frames whose CRC did not verify, by message id.
	BadCRC      map[string]int `json:"bad_crc_by_msgid"`
	BadCRCTotal int            `json:"bad_crc"`
	// OtherErrors are the reader's other non-fatal errors, by text.
	OtherErrors map[string]int `json:"other_errors"`
	// SysComp counts good frames by "sysid-compid".
	SysComp map[string]int `json:"by_sysid_compid"`
}

var crcRe = regexp.MustCompile(`wrong checksum, expected [0-9a-f]+, got [0-9a-f]+, message id is (\d+)`)

func main() {
	shared := flag.String("shared", "../shared", "the shared folder")
	out := flag.String("out", "decode/mavlink/testdata/golden", "output folder")
	flag.Parse()
	files := []string{"uavlogviewer_vtol.tlog", "ardusub_small.tlog", "ardusub_blueos_distance_sensor_badcrc.tlog"}
	drw := &dialect.ReadWriter{Dialect: ardupilotmega.Dialect}
	if err := drw.Initialize(); err != nil {
		log.Fatal(err)
	}
	for _, name := range files {
		g, err := run(filepath.Join(*shared, "data", "mavlink", name), drw)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		g.File = name
		b, _ := json.MarshalIndent(g, "", " ")
		dst := filepath.Join(*out, name+".golden.json")
		if err := os.WriteFile(dst, append(b, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: entries=%d good=%d bad_crc=%d unknown=%v other=%v\n", name, g.Entries, g.GoodFrames, g.BadCRCTotal, g.Unknown, g.OtherErrors)
	}
}

func run(path string, drw *dialect.ReadWriter) (*Golden, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &Golden{
		Source:      "shared/data/mavlink/" + filepath.Base(path) + " (see SOURCES.md)",
		Parser:      "github.com/bluenviron/gomavlib/v3 v3.3.5 pkg/tlog + dialects/ardupilotmega",
		ByName:      map[string]int{},
		ByMsgID:     map[string]int{},
		Unknown:     map[string]int{},
		BadCRC:      map[string]int{},
		OtherErrors: map[string]int{},
		SysComp:     map[string]int{},
	}
	r := &tlog.Reader{ByteReader: bufio.NewReader(f), DialectRW: drw}
	if err := r.Initialize(); err != nil {
		return nil, err
	}
	for {
		e, err := r.Read()
		if err == nil {
			g.addEntry(e)
			continue
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return g, nil
		}
		if err := g.addReadError(err); err != nil {
			return nil, err
		}
	}
}

// addReadError counts a frame the reader refused, by the message id of a
// bad CRC or else by the error's text; an error that is not a frame's is
// returned.
func (g *Golden) addReadError(err error) error {
	var re frame.ReadError
	if !errors.As(err, &re) {
		return err
	}
	g.Entries++
	if m := crcRe.FindStringSubmatch(err.Error()); m != nil {
		g.BadCRC[m[1]]++
		g.BadCRCTotal++
	} else {
		g.OtherErrors[err.Error()]++
	}
	return nil
}

// addEntry counts one entry read: its time, frame version and message.
func (g *Golden) addEntry(e *tlog.Entry) {
	g.Entries++
	usec := e.Time.UnixMicro()
	if g.FirstUsec == 0 {
		g.FirstUsec = usec
	}
	g.LastUsec = usec
	switch e.Frame.(type) {
	case *frame.V1Frame:
		g.V1Frames++
	case *frame.V2Frame:
		g.V2Frames++
	}
	msg := e.Frame.GetMessage()
	id := strconv.FormatUint(uint64(msg.GetID()), 10)
	if _, ok := msg.(*message.MessageRaw); ok {
		g.Unknown[id]++
		return
	}
	g.GoodFrames++
	g.ByMsgID[id]++
	g.ByName[msgName(msg)]++
	g.SysComp[fmt.Sprintf("%d-%d", e.Frame.GetSystemID(), e.Frame.GetComponentID())]++
}

// msgName turns gomavlib's Go type name (MessageGpsRawInt) into the MAVLink
// name (GPS_RAW_INT) the way gomavlib itself does for CRC_EXTRA.
func msgName(m message.Message) string {
	t := fmt.Sprintf("%T", m)
	i := regexp.MustCompile(`\.Message`).FindStringIndex(t)
	s := t[i[1]:]
	s = regexp.MustCompile("([A-Z])").ReplaceAllString(s, "_${1}")
	b := []byte(s[1:])
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
