package cot

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"reflect"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/output/cot/cottest"
)

// TestMeshNodeCoT: node-cot reads every kind of event from its TAK
// Protocol version 1 message exactly as it reads the XML.
func TestMeshNodeCoT(t *testing.T) {
	docs := encodeAll(t)
	docs = docs[:len(docs)-2] // the delete event and the hostile twin add nothing here
	// A course without a speed stays XML (its speed unknown, not 0).
	noSpeed := airliner()
	noSpeed.Track.SpeedMps = nil
	b, _ := (&Encoder{}).AppendTrack(nil, noSpeed)
	docs = append(docs, b)
	var msgs [][]byte
	for _, d := range docs {
		m, err := AppendMesh(nil, d, "cuasd")
		if err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		if !bytes.HasPrefix(m, []byte{0xbf, 0x01, 0xbf}) {
			t.Fatalf("no mesh header: % x", m[:3])
		}
		msgs = append(msgs, m[3:])
	}
	fromXML := cottest.Parse(t, docs)
	fromProto := cottest.ParseProto(t, msgs)
	for i := range docs {
		x, p := fromXML[i], fromProto[i]
		if p.Error != "" {
			t.Fatalf("node-cot rejected message %d: %s", i, p.Error)
		}
		if !reflect.DeepEqual(x, p) {
			t.Errorf("document %d differs:\nxml   %+v\nproto %+v", i, x, p)
		}
	}
}

func TestUDPProtocol1(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	logs := &connectedFormat{Handler: slog.DiscardHandler}
	s, err := NewUDP("udp://"+l.LocalAddr().String()+"?protocol=1", UDPOptions{}, Options{Log: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	publishTrack(t, nc, airliner())
	d := readDatagrams(t, l, 1)[0]
	// Issue 34: the log and /v1/outputs name the real format, not "CoT XML".
	if f, logged := s.Sinks()[0].Format, logs.got.Load(); f != "TAK Protocol version 1" || logged != "TAK Protocol version 1" {
		t.Errorf("format %q; logged %v", f, logged)
	}
	if x, _ := NewUDP(l.LocalAddr().String(), UDPOptions{}, Options{}); x.Sinks()[0].Format != "CoT XML" {
		t.Errorf("an XML sink's format is %q", x.Sinks()[0].Format)
	}
	got := cottest.ParseProto(t, [][]byte{d[3:]})[0]
	if !bytes.HasPrefix(d, meshHeader) || got.UID != "cuasd.site1.adsb-4CA1FA" || got.Callsign != "RYR12AB" {
		t.Fatalf("received % x…: %+v", d[:3], got)
	}
	if _, err := NewUDP("udp://127.0.0.1:1?protocol=2", UDPOptions{}, Options{}); flagOf(err) != "--cot-udp" {
		t.Fatalf("protocol=2: %v", err)
	}
}

// FuzzMesh: any bytes are either refused or transcoded; never a panic.
// Every document the encoder writes transcodes.
func FuzzMesh(f *testing.F) {
	var e Encoder
	for _, ev := range []any{airliner(), droneAlert(), circleZone(), polygonZone()} {
		var b []byte
		switch v := ev.(type) {
		case *events.TrackEvent:
			b, _ = e.AppendTrack(nil, v)
		case *events.ZoneEvent:
			b, _ = e.AppendZone(nil, v)
		}
		f.Add(b)
	}
	f.Add([]byte(`<event uid="a" type="b" stale="2026-01-01T00:00:00Z"><point lat="x"/></event>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := AppendMesh(nil, doc, "cuasd")
		if err == nil && !bytes.HasPrefix(m, meshHeader) {
			t.Fatalf("no header: % x", m)
		}
		// The stream frame carries the same event; its length is exact.
		st, serr := AppendStream(nil, doc)
		if (serr == nil) != (err == nil) {
			t.Fatalf("mesh %v, stream %v", err, serr)
		}
		if serr == nil {
			n, k := protowire.ConsumeVarint(st[1:])
			if st[0] != 0xbf || k < 0 || int(n) != len(st)-1-k {
				t.Fatalf("stream frame % x", st)
			}
		}
	})
}

// connectedFormat is a slog handler that keeps the format attribute of the
// sink's "CoT sink connected" line.
type connectedFormat struct {
	slog.Handler
	got atomic.Value
}

func (h *connectedFormat) Enabled(context.Context, slog.Level) bool { return true }
func (h *connectedFormat) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *connectedFormat) WithGroup(string) slog.Handler            { return h }

func (h *connectedFormat) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if r.Message == "CoT sink connected" && a.Key == "format" {
			h.got.Store(a.Value.String())
		}
		return true
	})
	return nil
}
