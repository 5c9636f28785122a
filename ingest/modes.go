package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// ModeSFormat is a receiver output format carrying Mode S frames.
type ModeSFormat string

// The formats readsb and dump1090 speak: Beast binary (ports 30005 out,
// 30004/30104 in) and AVR text (30002 out, 30001 in).
const (
	Beast ModeSFormat = "beast"
	AVR   ModeSFormat = "avr"
	// SBS is BaseStation text (readsb's 30003, Virtual Radar Server): MSG
	// lines, published one line per frame in lp batches; the ADS-B decoder
	// recognises them by their "MSG," start (issue 21).
	SBS ModeSFormat = "sbs"
)

// batchMax and batchDelay bound how many frames, and how long, an adapter
// collects before publishing one lp batch to JetStream.
const (
	batchMax   = 512
	batchDelay = 20 * time.Millisecond
	// queueLen bounds the batches waiting for JetStream per connection;
	// a full queue for longer than queueWait drops the batch (counted).
	queueLen  = 64
	queueWait = time.Second
)

// ModeSStream splits a Beast or AVR byte stream into Mode S frames and
// publishes them in batches. One ModeSStream serves one connection.
type ModeSStream struct {
	Format  ModeSFormat
	Sensor  string
	Adapter string
	Pub     Sink
	Log     *slog.Logger
	// Clock is what the receiver's Beast timestamps are (issue 30):
	// sensorclock.MHz12 (dump1090, readsb) or sensorclock.GPS
	// (Radarcape-style); it travels with each batch as Cuas-Clock.
	Clock sensorclock.Kind

	// Skipped counts bytes that were not part of a frame.
	Skipped int
	// ModeAC counts Mode A/C records. They carry no address and are not
	// decoded; they are published (for Beast out) only in Beast batches.
	ModeAC int
}

type batch struct {
	body []byte
	n    int
	// start is when the batch's first frame arrived; recv, set when the
	// batch is flushed, when its newest did: the receive time published,
	// an upper bound on every frame's time (issue 30).
	start, recv int64
}

// Run reads r until EOF or ctx ends, publishing every Mode S frame (and,
// when the sink takes bus.FramingBeast batches, every frame as a Beast
// record with its timestamp and signal level, zero when the receiver sent
// none, Mode A/C included).
func (s *ModeSStream) Run(ctx context.Context, r io.Reader) error {
	b := &batcher{s: s, ctx: ctx, framing: bus.FramingLP, q: make(chan batch, queueLen), free: make(chan []byte, 8)}
	b.fs, _ = s.Pub.(FramedSink)
	if b.fs != nil && s.Format != SBS {
		b.framing = bus.FramingBeast
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.publish()
	}()
	var err error
	switch s.Format {
	case Beast:
		err = s.runBeast(ctx, r, b.add, b.flush)
	case AVR:
		err = s.runAVR(ctx, r, b.add, b.flush)
	case SBS:
		err = s.runSBS(ctx, r, b.add, b.flush)
	default:
		err = errors.New("unknown format " + string(s.Format))
	}
	b.flush()
	close(b.q)
	wg.Wait()
	return err
}

// batcher collects a stream's frames into batches and hands them to its
// publishing goroutine.
type batcher struct {
	s       *ModeSStream
	ctx     context.Context
	fs      FramedSink // nil: the sink takes lp only
	framing string
	q       chan batch
	cur     batch
	counted int // Mode A/C replies already reported to the sink
	// free returns published batches' buffers for reuse: the sink answers
	// only once JetStream holds a copy.
	free chan []byte
}

// publishWindow is how many batches of one connection may wait for their
// acknowledgements at once (with a BatchSender). A batch sent to a stream
// leader that then stopped is never answered and waits the publisher's
// whole timeout (10 s): sent one at a time, it held the receiver's frames
// back for that long (make faults, (b): SBS 5 s after a nats-server
// restart); with a window the batches after it go to the new leader.
const publishWindow = 8

func (b *batcher) publish() {
	snd, ok := b.s.Pub.(BatchSender)
	if !ok {
		b.publishEach()
		return
	}
	clock := ""
	if b.framing != bus.FramingLP {
		clock = clockHeader(b.s.Clock)
	}
	slots := make(chan struct{}, publishWindow)
	var wg sync.WaitGroup
	for bt := range b.q {
		slots <- struct{}{}
		w, err := snd.SendBatch(b.s.Adapter, "adsb", b.s.Sensor, b.framing, clock, "", bt.body, bt.n, bt.recv, "")
		if err != nil {
			b.published(bt, err)
			<-slots
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.Wait(b.ctx)
			b.published(bt, err)
			<-slots
		}()
	}
	wg.Wait()
}

// publishEach publishes the batches one at a time, each once the one
// before was answered (a sink that is not a BatchSender).
func (b *batcher) publishEach() {
	s := b.s
	for bt := range b.q {
		var err error
		if b.framing == bus.FramingLP {
			_, err = s.Pub.PublishBatch(b.ctx, s.Adapter, "adsb", s.Sensor, bt.body, bt.n, bt.recv, "")
		} else {
			_, err = b.fs.PublishBatchFramed(b.ctx, s.Adapter, "adsb", s.Sensor, b.framing, clockHeader(s.Clock), "", bt.body, bt.n, bt.recv, "")
		}
		b.published(bt, err)
	}
}

// published logs a batch that failed and keeps its buffer for reuse.
func (b *batcher) published(bt batch, err error) {
	if err != nil {
		b.s.Log.Warn("publish Mode S batch", "adapter", b.s.Adapter, "sensor", b.s.Sensor, "frames", bt.n, "err", err)
	}
	select {
	case b.free <- bt.body[:0]:
	default:
	}
}

func (b *batcher) flush() {
	if b.fs != nil && b.s.ModeAC > b.counted {
		b.fs.ModeAC(b.s.Adapter, b.s.ModeAC-b.counted)
		b.counted = b.s.ModeAC
	}
	if b.cur.n == 0 {
		return
	}
	b.cur.recv = time.Now().UnixNano()
	t := time.NewTimer(queueWait)
	select {
	case b.q <- b.cur:
	case <-t.C:
		b.s.Pub.Dropped("adsb", b.s.Adapter, "queue_full", b.cur.n)
	case <-b.ctx.Done():
	}
	t.Stop()
	b.cur = batch{}
}

func (b *batcher) add(typ byte, ts uint64, sig byte, frame []byte) {
	if typ == bus.BeastModeAC {
		b.s.ModeAC++
		if b.framing != bus.FramingBeast {
			return // lp has no way to say what a 2-byte frame is
		}
	}
	cur := &b.cur
	if cur.n == 0 {
		cur.start = time.Now().UnixNano()
		select {
		case cur.body = <-b.free:
		default:
			cur.body = make([]byte, 0, 24*batchMax)
		}
	}
	if b.framing == bus.FramingBeast {
		cur.body = bus.AppendBeast(cur.body, typ, ts, sig, frame)
	} else {
		cur.body = bus.AppendLP(cur.body, frame)
	}
	cur.n++
	// The clock is read every 64 frames, not per frame; a quiet link is
	// flushed by the read deadline (setFlushDeadline) instead.
	if cur.n >= batchMax || (cur.n&63 == 0 && time.Duration(time.Now().UnixNano()-cur.start) > batchDelay) {
		b.flush()
	}
}

// clockHeader is the Cuas-Clock of a Beast batch: none for the default.
func clockHeader(k sensorclock.Kind) string {
	if k == sensorclock.MHz12 {
		return ""
	}
	return k.String()
}

// SplitClock splits a receiver address with an optional clock, as
// --beast-listen and --beast-connect take it ("host:port?clock=gps"):
// "12mhz" (the default, dump1090 and readsb) or "gps" (Radarcape-style
// timestamps, issue 30).
func SplitClock(spec string) (addr string, clock sensorclock.Kind, err error) {
	addr, q, ok := strings.Cut(spec, "?")
	if !ok {
		return spec, sensorclock.MHz12, nil
	}
	v, ok := strings.CutPrefix(q, "clock=")
	if !ok || strings.ContainsAny(v, "&=") {
		return addr, clock, fmt.Errorf("%q: the only option is clock=12mhz or clock=gps", spec)
	}
	clock, err = sensorclock.ParseKind(v)
	if err != nil || clock == sensorclock.Receiver {
		return addr, clock, fmt.Errorf("%q: clock=%s: a Beast receiver's clock is 12mhz or gps", spec, v)
	}
	return addr, clock, nil
}

// SpecOptions parses the options after the '?' of an input flag's spec
// (a receiver's, a field sensor's): query syntax, only the known names,
// each at most once (url.Values.Get would silently take the first of
// two). known, in the order an error lists them.
func SpecOptions(spec, query string, known ...string) (url.Values, error) {
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%q: options: %w", spec, err)
	}
	for k, vs := range q {
		switch {
		case !slices.Contains(known, k):
			return nil, fmt.Errorf("%q: unknown option %q (%s)", spec, k, strings.Join(known, ", "))
		case len(vs) > 1:
			return nil, fmt.Errorf("%q: option %q given twice", spec, k)
		}
	}
	return q, nil
}

// addFunc takes one frame: its Beast record type, timestamp and signal
// byte (zero when the format has none) and its bytes.
type addFunc func(typ byte, ts uint64, sig byte, frame []byte)

// deadliner is implemented by net.Conn: a read deadline lets a quiet
// connection flush its partial batch.
type deadliner interface{ SetReadDeadline(time.Time) error }

// setFlushDeadline makes the next read of r, when r is a deadliner, time
// out after batchDelay, so that the readers flush a partial batch.
func setFlushDeadline(r io.Reader) {
	if d, ok := r.(deadliner); ok {
		_ = d.SetReadDeadline(time.Now().Add(batchDelay))
	}
}

// isTimeout reports a network timeout (a read deadline, or Accept's).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func readChunk(r io.Reader, buf []byte, flush func()) (int, error) {
	setFlushDeadline(r)
	n, err := r.Read(buf)
	if isTimeout(err) {
		flush()
		return n, nil
	}
	return n, err
}

func (s *ModeSStream) runBeast(ctx context.Context, r io.Reader, add addFunc, flush func()) error {
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 32<<10)
	var f adsb.BeastFrame
	for ctx.Err() == nil {
		n, err := readChunk(r, chunk, flush)
		buf = append(buf, chunk[:n]...)
		p := buf
		for len(p) > 0 {
			used, perr := adsb.ParseBeast(p, &f)
			if perr == adsb.ErrIncomplete {
				break
			}
			p = p[used:]
			if perr != nil {
				s.Skipped += used
				continue
			}
			add(f.Type, f.Timestamp, f.Signal, f.Bytes())
		}
		// Keep the unparsed tail at the front of the buffer.
		buf = buf[:copy(buf, p)]
		if len(buf) > 1<<20 {
			s.Skipped += len(buf)
			buf = buf[:0]
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return ctx.Err()
}

func (s *ModeSStream) runAVR(ctx context.Context, r io.Reader, add addFunc, flush func()) error {
	var f adsb.AVRFrame
	return s.eachLine(ctx, r, flush, func(line []byte) {
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		if perr := adsb.ParseAVR(line, &f); perr != nil {
			s.Skipped += len(line)
			return
		}
		add(avrType(f.Len), f.Timestamp, f.Signal, f.Bytes())
	})
}

// eachLine calls fn with every line of r (AVR and SBS are line formats)
// until EOF or ctx ends, flushing the partial batch whenever the read
// deadline passes; a line over 4 KiB is skipped.
func (s *ModeSStream) eachLine(ctx context.Context, r io.Reader, flush func(), fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for ctx.Err() == nil {
		setFlushDeadline(r)
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if isTimeout(err) {
			flush()
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 4096 {
				s.Skipped += len(line)
				line = line[:0]
			}
			continue
		}
		fn(line)
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return ctx.Err()
}

// avrType is the Beast record type of an AVR frame of n bytes.
func avrType(n uint8) byte {
	switch n {
	case 2:
		return bus.BeastModeAC
	case 7:
		return bus.BeastModeSShort
	}
	return bus.BeastModeSLong
}

// runSBS reads SBS text lines, publishing each MSG line as a frame; other
// record types (SEL, ID, AIR, STA, CLK) carry nothing a track uses.
func (s *ModeSStream) runSBS(ctx context.Context, r io.Reader, add addFunc, flush func()) error {
	return s.eachLine(ctx, r, flush, func(line []byte) {
		if l := bytes.TrimSpace(line); bytes.HasPrefix(l, []byte("MSG,")) {
			add(0, 0, 0, l)
		} else {
			s.Skipped += len(line)
		}
	})
}
