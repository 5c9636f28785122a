package mavlink

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	gmframe "github.com/bluenviron/gomavlib/v3/pkg/frame"
	"github.com/bluenviron/gomavlib/v3/pkg/message"

	"github.com/cuasd/cuasd/internal/testshared"
)

// mixedStream concatenates the frames of every vector the C parser accepts
// (MAVLink 1 and 2, signed, truncated, 0 to 249-byte payloads), with three
// garbage bytes after every fifth frame, repeated to at least 256 KiB.
func mixedStream(tb testing.TB) (stream []byte, frames int) {
	tb.Helper()
	var unit []byte
	n := 0
	for _, v := range loadVectors(tb) {
		if len(v.CParser.Frames) != 1 || v.CParser.WithKey != nil && len(v.CParser.WithKey.Frames) == 0 {
			continue
		}
		unit = append(unit, mustHex(tb, v.Hex)...)
		n++
		if n%5 == 0 {
			unit = append(unit, 0x00, 0x55, 0xAA)
		}
	}
	for len(stream) < 256<<10 {
		stream = append(stream, unit...)
		frames += n
	}
	return stream, frames
}

// realStream is the frames of ardusub_small.tlog without the tlog
// timestamps: real ArduSub/QGC traffic as it would arrive on a link.
func realStream(tb testing.TB) (stream []byte, frames int) {
	tb.Helper()
	data, err := os.ReadFile(testshared.Path(tb, "data", "mavlink", "ardusub_small.tlog"))
	if err != nil {
		tb.Fatal(err)
	}
	var r TlogReader
	r.Reset(data)
	for {
		f, _, ok := r.Next()
		if !ok {
			break
		}
		stream = append(stream, f.Raw...)
		frames++
	}
	return stream, frames
}

func benchFraming(b *testing.B, stream []byte, want int) {
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var p Parser
	n := 0
	for b.Loop() {
		p.Reset(stream)
		for {
			if _, ok := p.Next(); !ok {
				break
			}
			n++
		}
	}
	if p.Stats().Frames != want {
		b.Fatalf("%d frames, want %d (%+v)", p.Stats().Frames, want, p.Stats())
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(n), "ns/frame")
}

// BenchmarkFramingMixed measures framing + CRC (+ signature check absent:
// no key) over the mixed vector stream.
func BenchmarkFramingMixed(b *testing.B) {
	s, n := mixedStream(b)
	benchFraming(b, s, n)
}

// BenchmarkFramingReal measures framing + CRC over real ArduSub traffic.
func BenchmarkFramingReal(b *testing.B) {
	s, n := realStream(b)
	benchFraming(b, s, n)
}

// BenchmarkFramingStream feeds the mixed stream to a Stream in 1400-byte
// pieces, as UDP datagrams would arrive.
func BenchmarkFramingStream(b *testing.B) {
	stream, want := mixedStream(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	n := 0
	var s Stream
	for b.Loop() {
		s = Stream{}
		for i := 0; i < len(stream); i += 1400 {
			s.Write(stream[i:min(i+1400, len(stream))])
			for {
				if _, ok := s.Next(); !ok {
					break
				}
				n++
			}
		}
	}
	if s.Stats().Frames != want {
		b.Fatalf("%d frames, want %d", s.Stats().Frames, want)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkTlogReader reads the real ArduSub log.
func BenchmarkTlogReader(b *testing.B) {
	data, err := os.ReadFile(testshared.Path(b, "data", "mavlink", "ardusub_small.tlog"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var r TlogReader
	n := 0
	for b.Loop() {
		r.Reset(data)
		for {
			if _, _, ok := r.Next(); !ok {
				break
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// benchDecode measures framing + full field decode to JSON with this
// package's generated tables.
func benchDecode(b *testing.B, stream []byte) {
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var p Parser
	var m Message
	buf := make([]byte, 0, 4096)
	n := 0
	for b.Loop() {
		p.Reset(stream)
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			if m.Decode(&f) {
				buf = m.AppendJSON(buf[:0])
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(len(buf)), "last-json-bytes")
}

func BenchmarkDecodeJSONMixed(b *testing.B) { s, _ := mixedStream(b); benchDecode(b, s) }
func BenchmarkDecodeJSONReal(b *testing.B)  { s, _ := realStream(b); benchDecode(b, s) }

// BenchmarkDecodeFieldsReal measures framing + decode + reading every
// field's value (no JSON) with the generated tables.
func BenchmarkDecodeFieldsReal(b *testing.B) {
	stream, _ := realStream(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var p Parser
	var m Message
	var sink uint64
	n := 0
	for b.Loop() {
		p.Reset(stream)
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			if m.Decode(&f) {
				for i := range m.Def.Fields {
					fd := &m.Def.Fields[i]
					k := max(1, int(fd.ArrayLen))
					for j := range k {
						sink += m.Elem(fd, j).bits
					}
				}
			}
			n++
		}
	}
	_ = sink
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkGomavlibDecodeReal is the alternative design: this package's
// framing, then gomavlib's reflection-based dialect decoder into its
// message structs.
func BenchmarkGomavlibDecodeReal(b *testing.B) {
	stream, _ := realStream(b)
	drw := gomavlibRW(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var p Parser
	n := 0
	for b.Loop() {
		p.Reset(stream)
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			if mrw := drw.GetMessage(f.MsgID); mrw != nil {
				if _, err := mrw.Read(&message.MessageRaw{ID: f.MsgID, Payload: f.Payload}, f.Version == 2); err != nil {
					b.Fatal(err)
				}
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkGomavlibJSONReal: gomavlib decode, then encoding/json of its
// struct (what the endpoint would do with gomavlib's dialects).
func BenchmarkGomavlibJSONReal(b *testing.B) {
	stream, _ := realStream(b)
	drw := gomavlibRW(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var p Parser
	n := 0
	for b.Loop() {
		p.Reset(stream)
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			if mrw := drw.GetMessage(f.MsgID); mrw != nil {
				msg, err := mrw.Read(&message.MessageRaw{ID: f.MsgID, Payload: f.Payload}, f.Version == 2)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(msg); err != nil {
					b.Fatal(err)
				}
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkGomavlibReaderReal is gomavlib's own stack: its frame reader
// with the ardupilotmega dialect over the same bytes.
func BenchmarkGomavlibReaderReal(b *testing.B) {
	stream, want := realStream(b)
	drw := gomavlibRW(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		r := &gmframe.Reader{ByteReader: bytes.NewReader(stream), DialectRW: drw}
		if err := r.Initialize(); err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			if _, err := r.Read(); err != nil {
				if _, ok := err.(gmframe.ReadError); ok {
					continue
				}
				break
			}
			got++
		}
		if got != want {
			b.Fatalf("%d frames, want %d", got, want)
		}
		n += got
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkObserveReal measures framing + decode + Observe for the frames
// that map to observations.
func BenchmarkObserveReal(b *testing.B) {
	stream, _ := realStream(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var p Parser
	var m Message
	n, obs := 0, 0
	for b.Loop() {
		p.Reset(stream)
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			n++
			if Observes(f.MsgID) && m.Decode(&f) {
				if _, ok := Observe(&f, &m, "udp-14550", 1); ok {
					obs++
				}
			}
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(obs)/float64(b.N), "obs/op")
}

// BenchmarkParseTlog is the endpoint's work for a whole tlog (1.5 MB).
func BenchmarkParseTlog(b *testing.B) {
	data, err := os.ReadFile(testshared.Path(b, "data", "mavlink", "ardusub_small.tlog"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, Options{Format: FormatTlog}); err != nil {
			b.Fatal(err)
		}
	}
}
