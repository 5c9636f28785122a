package cot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
)

// BenchmarkAppendTrack is the encoder alone: one decoded drone event (with
// its operator point) to CoT XML in a reused buffer. It must not allocate.
func BenchmarkAppendTrack(b *testing.B) {
	ev := droneAlert()
	var e Encoder
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.AppendTrack(buf[:0], ev)
		buf, _ = e.AppendOperator(buf, ev)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkAppendStream is what a TAK Server stream that agreed to TAK
// Protocol version 1 does per event on its writer goroutine: transcode the
// XML of a drone event into a stream frame.
func BenchmarkAppendStream(b *testing.B) {
	doc, _ := (&Encoder{}).AppendTrack(nil, droneAlert())
	var frame []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		frame, _ = AppendStream(frame[:0], doc)
	}
}

// BenchmarkSinkEvent is what a sink does per track message: decode the
// JSON event, encode the track and operator point, and queue copies.
func BenchmarkSinkEvent(b *testing.B) {
	data, _ := json.Marshal(droneAlert())
	s, err := NewUDP("127.0.0.1:9", UDPOptions{}, Options{Queue: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.onTrackData(data)
		if s.q.Len() > 1<<19 {
			for s.q.Len() > 0 {
				<-s.q.C()
			}
		}
	}
}

func TestEncoderDoesNotAllocate(t *testing.T) {
	ev := droneAlert()
	var e Encoder
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		buf, _ = e.AppendTrack(buf[:0], ev)
		buf, _ = e.AppendOperator(buf, ev)
		var z events.ZoneEvent = *polygonZone()
		buf, _ = e.AppendZone(buf[:0], &z)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per event", allocs)
	}
}

// BenchmarkSinkOverNATS is the CoT output's own pipeline: track events
// published on an embedded NATS, received by a UDP sink, decoded, encoded
// (track and operator point) and sent to a local listener. It reports the
// events per second and the process CPU time per event (publisher, NATS
// server, sink and listener together).
func BenchmarkSinkOverNATS(b *testing.B) {
	srv := natstest.Start(b)
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := l.ReadFromUDP(buf); err != nil {
				return
			}
		}
	}()
	s, err := NewUDP(l.LocalAddr().String(), UDPOptions{}, Options{Queue: 1 << 16, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := newUpReporter()
	go func() { _ = s.Run(ctx, output.Conn(srv.Conn), rep) }()
	<-rep.up
	msgs := make([][]byte, 1000)
	subjects := make([]string, len(msgs))
	for i := range msgs {
		ev := droneAlert()
		ev.Track.TrackID = fmt.Sprintf("rid:BENCH%05d", i)
		msgs[i], _ = json.Marshal(ev)
		subjects[i] = bus.TrackSubject("rid", ev.Track.TrackID[4:])
	}
	cpu0 := cpuTime()
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		_ = srv.Conn.Publish(subjects[i%len(msgs)], msgs[i%len(msgs)])
		if i%1000 == 999 {
			// Pace the publisher to what the sink takes, so that the
			// measurement is of delivery, not of drops.
			for s.q.Len() > 1<<14 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	_ = srv.Conn.Flush()
	want := uint64(2 * b.N)
	deadline := time.Now().Add(time.Minute)
	for s.sent.Load()+s.q.Dropped() < want {
		if time.Now().After(deadline) {
			b.Fatalf("sent %d, dropped %d of %d", s.sent.Load(), s.q.Dropped(), want)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
	b.ReportMetric(float64(s.q.Dropped()), "dropped")
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
