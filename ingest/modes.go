package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
)

// ModeSFormat is a receiver output format carrying Mode S frames.
type ModeSFormat string

// The formats readsb and dump1090 speak: Beast binary (ports 30005 out,
// 30004/30104 in) and AVR text (30002 out, 30001 in).
const (
	Beast ModeSFormat = "beast"
	AVR   ModeSFormat = "avr"
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

	// Skipped counts bytes that were not part of a frame.
	Skipped int
	// ModeAC counts Mode A/C records, which carry no address and are not
	// published.
	ModeAC int
}

type batch struct {
	body []byte
	n    int
	recv int64
}

// Run reads r until EOF or ctx ends, publishing every Mode S frame.
func (s *ModeSStream) Run(ctx context.Context, r io.Reader) error {
	q := make(chan batch, queueLen)
	// Published batches' buffers come back for reuse: PublishBatch returns
	// only once JetStream holds a copy.
	free := make(chan []byte, 8)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.publishLoop(ctx, q, free)
	}()
	var cur batch
	flush := func() {
		if cur.n == 0 {
			return
		}
		t := time.NewTimer(queueWait)
		select {
		case q <- cur:
		case <-t.C:
			s.Pub.Dropped("adsb", s.Adapter, "queue_full", cur.n)
		case <-ctx.Done():
		}
		t.Stop()
		cur = batch{}
	}
	add := func(frame []byte) {
		if cur.n == 0 {
			cur.recv = time.Now().UnixNano()
			select {
			case cur.body = <-free:
			default:
				cur.body = make([]byte, 0, 16*batchMax)
			}
		}
		cur.body = bus.AppendLP(cur.body, frame)
		cur.n++
		// The clock is read every 64 frames, not per frame; a quiet link
		// is flushed by the read deadline (setFlushDeadline) instead.
		if cur.n >= batchMax || (cur.n&63 == 0 && time.Duration(time.Now().UnixNano()-cur.recv) > batchDelay) {
			flush()
		}
	}
	var err error
	switch s.Format {
	case Beast:
		err = s.runBeast(ctx, r, add, flush)
	case AVR:
		err = s.runAVR(ctx, r, add, flush)
	default:
		err = errors.New("unknown format " + string(s.Format))
	}
	flush()
	close(q)
	wg.Wait()
	return err
}

// publishLoop publishes the batches of q in order and hands their buffers
// back through free.
func (s *ModeSStream) publishLoop(ctx context.Context, q <-chan batch, free chan<- []byte) {
	for b := range q {
		if _, err := s.Pub.PublishBatch(ctx, s.Adapter, "adsb", s.Sensor, b.body, b.n, b.recv, ""); err != nil {
			s.Log.Warn("publish Mode S batch", "adapter", s.Adapter, "sensor", s.Sensor, "frames", b.n, "err", err)
		}
		select {
		case free <- b.body[:0]:
		default:
		}
	}
}

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

func (s *ModeSStream) runBeast(ctx context.Context, r io.Reader, add func([]byte), flush func()) error {
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
			if f.Type == adsb.BeastModeAC {
				s.ModeAC++
				continue
			}
			add(f.Bytes())
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

func (s *ModeSStream) runAVR(ctx context.Context, r io.Reader, add func([]byte), flush func()) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var f adsb.AVRFrame
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
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := adsb.ParseAVR(line, &f); perr != nil {
				s.Skipped += len(line)
			} else if f.Len == 2 {
				s.ModeAC++
			} else {
				add(f.Bytes())
			}
		}
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
