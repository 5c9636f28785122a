package ingest

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/cuasd/cuasd/lifecycle"
)

// ErrNotRunning is what HTTP answers a publish with when it is not
// running: before the inputs started, or once they stopped.
var ErrNotRunning = errors.New("ingest: the HTTP input is not running")

// HTTP is HTTP ingest (POST /v1/ingest/{protocol}, and the decode
// endpoints' publish option) as an input. The HTTP server calls the
// request handler once per request, and the handler must answer that
// request with what was stored; so HTTP is the other way round from the
// sources that read a socket: its Run only connects the Sink it is given
// to the handler (PublishFrames) and holds it until ctx ends. That puts
// HTTP ingest in the inputs' place in the lifecycle (started after the
// pipeline it feeds, stopped before it) and in /readyz as an input, and a
// request that arrives while the inputs are stopped is refused
// (ErrNotRunning: 503), never published into a closing pipeline.
type HTTP struct {
	sink atomic.Pointer[Sink]
}

// NewHTTP returns HTTP ingest, refusing frames until Run.
func NewHTTP() *HTTP { return &HTTP{} }

// Name implements Source.
func (*HTTP) Name() string { return "http" }

// Run implements Source: frames reach sink until ctx ends.
func (h *HTTP) Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error {
	h.sink.Store(&sink)
	defer h.sink.Store(nil)
	rep.Up()
	<-ctx.Done()
	return nil
}

// PublishFrames publishes a request's frames through the Sink of Run,
// answering once they are stored; ErrNotRunning when Run is not running.
func (h *HTTP) PublishFrames(ctx context.Context, adapter, protocol, sensor string, frames []Frame) (Result, error) {
	s := h.sink.Load()
	if s == nil {
		return Result{}, ErrNotRunning
	}
	return (*s).PublishFrames(ctx, adapter, protocol, sensor, frames)
}
