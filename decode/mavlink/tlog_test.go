package mavlink

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	gmframe "github.com/bluenviron/gomavlib/v3/pkg/frame"
	"github.com/bluenviron/gomavlib/v3/pkg/message"

	"github.com/cuasd/cuasd/internal/testshared"
)

// golden is a file of testdata/golden, written once by
// internal/goldengen with gomavlib (not this package) from the shared tlogs.
type golden struct {
	File        string         `json:"file"`
	Entries     int            `json:"entries"`
	FirstUsec   int64          `json:"first_usec"`
	LastUsec    int64          `json:"last_usec"`
	V1Frames    int            `json:"v1_frames"`
	V2Frames    int            `json:"v2_frames"`
	GoodFrames  int            `json:"good_frames"`
	ByName      map[string]int `json:"by_name"`
	ByMsgID     map[string]int `json:"by_msgid"`
	Unknown     map[string]int `json:"unknown_by_msgid"`
	BadCRC      map[string]int `json:"bad_crc_by_msgid"`
	BadCRCTotal int            `json:"bad_crc"`
	OtherErrors map[string]int `json:"other_errors"`
	SysComp     map[string]int `json:"by_sysid_compid"`
}

var tlogFiles = []string{
	"uavlogviewer_vtol.tlog",
	"ardusub_small.tlog",
	"ardusub_blueos_distance_sensor_badcrc.tlog",
}

func loadGolden(t *testing.T, name string) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func readShared(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "data", "mavlink", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTlogGolden reads the three real logs and compares, per message id,
// the frame counts, unknown-id counts and bad-CRC counts with gomavlib's.
func TestTlogGolden(t *testing.T) {
	for _, name := range tlogFiles {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			if len(g.OtherErrors) != 0 {
				t.Fatalf("golden has reader errors %v: regenerate and look", g.OtherErrors)
			}
			data := readShared(t, name)
			var r TlogReader
			badCRC := map[string]int{}
			r.OnProblem = func(p Problem) {
				if p.Kind == ProblemBadCRC {
					badCRC[strconv.FormatUint(uint64(p.MsgID), 10)]++
				} else {
					t.Errorf("unexpected problem %v", p.Error())
				}
			}
			r.Reset(data)
			byID, byName, unknown, sysComp := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
			var v1, v2, good int
			var first, last, framed int64
			for {
				f, usec, ok := r.Next()
				if !ok {
					break
				}
				if first == 0 {
					first = usec
				}
				if usec < last {
					t.Logf("timestamp goes back at offset %d", f.Offset)
				}
				last = usec
				framed += int64(tlogStampLen + len(f.Raw))
				id := strconv.FormatUint(uint64(f.MsgID), 10)
				if f.Def == nil {
					unknown[id]++
					continue
				}
				good++
				byID[id]++
				byName[f.Name()]++
				sysComp[strconv.Itoa(int(f.SysID))+"-"+strconv.Itoa(int(f.CompID))]++
				if f.Version == 1 {
					v1++
				} else {
					v2++
				}
			}
			st := r.Stats()
			if good != g.GoodFrames || v1 != g.V1Frames || v2 != g.V2Frames {
				t.Errorf("good %d (v1 %d, v2 %d); gomavlib %d (v1 %d, v2 %d)", good, v1, v2, g.GoodFrames, g.V1Frames, g.V2Frames)
			}
			if st.Frames+st.BadCRC != g.Entries {
				t.Errorf("frames %d + bad CRC %d != entries %d", st.Frames, st.BadCRC, g.Entries)
			}
			if st.BadCRC != g.BadCRCTotal || !maps.Equal(badCRC, g.BadCRC) {
				t.Errorf("bad CRC %d %v; gomavlib %d %v", st.BadCRC, badCRC, g.BadCRCTotal, g.BadCRC)
			}
			for what, pair := range map[string][2]map[string]int{
				"by_msgid": {byID, g.ByMsgID}, "by_name": {byName, g.ByName},
				"unknown": {unknown, g.Unknown}, "by_sysid_compid": {sysComp, g.SysComp},
			} {
				if !maps.Equal(pair[0], pair[1]) {
					t.Errorf("%s: %v; gomavlib %v", what, pair[0], pair[1])
				}
			}
			if first != g.FirstUsec || last != g.LastUsec {
				t.Errorf("first/last usec %d/%d; gomavlib %d/%d", first, last, g.FirstUsec, g.LastUsec)
			}
			// Every byte is a returned entry or a bad-CRC entry: skipped
			// bytes are exactly the bad entries'.
			if st.SkippedBytes != int64(len(data))-framed || st.HeaderErrors != 0 || st.IncompleteAtEnd {
				t.Errorf("stats %+v", st)
			}

			// Parse(tlog) must agree, and report per-name counts.
			res, err := Parse(data, Options{Format: FormatTlog, Summary: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stats.Frames != st.Frames || res.Stats.BadCRC != g.BadCRCTotal || res.Frames != nil {
				t.Errorf("Parse: stats %+v", res.Stats)
			}
			for n, c := range g.ByName {
				if res.ByName[n] != c {
					t.Errorf("Parse by_name[%s] %d, gomavlib %d", n, res.ByName[n], c)
				}
			}

			// The same bytes as a raw stream: the timestamps become
			// garbage between frames, which the raw parser must skip.
			var p Parser
			p.Reset(data)
			rawByID := map[string]int{}
			for {
				f, ok := p.Next()
				if !ok {
					break
				}
				id := strconv.FormatUint(uint64(f.MsgID), 10)
				if f.Def == nil {
					id = "unknown " + id
				}
				rawByID[id]++
			}
			rs := p.Stats()
			t.Logf("as a raw stream: stats %+v", rs)
			if !maps.Equal(rawByID, g.ByMsgID) {
				t.Errorf("as a raw stream: %v; gomavlib on the tlog %v", rawByID, g.ByMsgID)
			}
			gm := gomavlibRawCount(t, data)
			t.Logf("gomavlib's frame reader on the raw stream finds %d good frames, this parser %d", gm, rs.Frames)
			if gm > rs.Frames {
				t.Errorf("gomavlib found more frames in the raw stream (%d) than this parser (%d)", gm, rs.Frames)
			}
		})
	}
}

// gomavlibRawCount counts the frames gomavlib's stream reader accepts in b
// read as a raw stream (it skips a byte after each error and does not rescan
// after a false start).
func gomavlibRawCount(t *testing.T, b []byte) int {
	t.Helper()
	r := &gmframe.Reader{ByteReader: bytes.NewReader(b), DialectRW: gomavlibRW(t)}
	if err := r.Initialize(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		f, err := r.Read()
		if err != nil {
			var re gmframe.ReadError
			if errors.As(err, &re) {
				continue
			}
			return n
		}
		if _, raw := f.GetMessage().(*message.MessageRaw); !raw {
			n++
		}
	}
}
