package zmq_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/ingest/sensors/zmq"
	"github.com/cuasd/cuasd/lifecycle"
)

// fakePub accepts one subscriber on ln, answers its handshake as a PUB
// socket and writes msg n times. It is the benchmark's publisher: the real
// libzmq one (python) is slower than the subscriber it would measure.
func fakePub(b *testing.B, ln net.Listener, msg []byte, n int) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	r := bufio.NewReader(c)
	greeting := make([]byte, zmq.GreetingSize)
	if _, err := io.ReadFull(r, greeting); err != nil {
		b.Error(err)
		return
	}
	w := bufio.NewWriterSize(c, 256<<10)
	w.Write(zmq.AppendGreeting(nil))
	w.Write(zmq.AppendReady(nil, "PUB"))
	w.Flush()
	// Read the subscriber's READY and subscription before hanging up, so
	// the close sends FIN after the messages, not a reset.
	ready := len(zmq.AppendReady(nil, "SUB")) + len(zmq.AppendSubscribe(nil, ""))
	if _, err := io.ReadFull(r, make([]byte, ready)); err != nil {
		b.Error(err)
		return
	}
	frame := zmq.AppendFrame(nil, 0, msg)
	for range n {
		w.Write(frame)
	}
	w.Flush()
}

// BenchmarkSubscribe is the ZeroMQ input end to end short of JetStream:
// frames over loopback TCP, parsed, re-encoded and handed to a sink.
func BenchmarkSubscribe(b *testing.B) {
	msg := []byte(`[{"Basic ID": {"id_type": "Serial Number (ANSI/CTA-2063-A)", "ua_type": 2, "id": "1581F5EXAMPLE001", "MAC": "AA:BB:CC:11:22:01", "RSSI": -63}}, {"Location/Vector Message": {"latitude": 51.47021, "longitude": -0.45311, "geodetic_altitude": 110.5, "height_agl": 80.0, "speed": 11.25, "vert_speed": 0.5, "direction": 95, "op_status": "Airborne"}}, {"System Message": {"latitude": 51.46950, "longitude": -0.45502}}, {"Operator ID Message": {"operator_id": "GBR-OP-EXAMPLE1"}}]`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go fakePub(b, ln, msg, b.N)
	src, err := zmq.Parse("tcp://"+ln.Addr().String(), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	sink := &sensorstest.CountSink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	done := make(chan struct{})
	rep := &stopAt{Reporter: lifecycle.NewStatus(nil).Reporter("zmq", lifecycle.Input), n: int64(b.N), sink: sink, cancel: cancel, done: done}
	go func() { src.Run(ctx, sink, rep); close(done) }()
	<-done
	b.StopTimer()
	if got := sink.Frames.Load(); got < int64(b.N) {
		b.Fatalf("%d of %d messages", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// stopAt ends the run once the publisher has hung up after its messages
// (the source then reports Retrying).
type stopAt struct {
	lifecycle.Reporter
	n      int64
	sink   *sensorstest.CountSink
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *stopAt) Retrying(err error) {
	if s.sink.Frames.Load() >= s.n {
		s.cancel()
	}
}
