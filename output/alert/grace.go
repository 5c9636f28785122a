package alert

import (
	"context"
	"errors"
	"time"
)

// AckGrace is how long a sink may still take its peer's answer (an MQTT
// broker's acknowledgement, a webhook's response) after the attempt's
// deadline passed.
var AckGrace = 2 * time.Second

// AckContext is the context a Sink waits for its peer's answer under: it
// ends when ctx is cancelled, but only AckGrace after ctx's deadline
// passes. After a stall — the process stopped (SIGSTOP) or the host
// suspended for longer than the deadline — the answer is often already in
// the socket when the deadline fires; counted as failed, the alert would
// be retried and delivered twice (the fault suite saw it, issue 32). The
// returned cancel releases it.
func AckContext(ctx context.Context) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			time.AfterFunc(AckGrace, cancel)
			return
		}
		cancel()
	})
	return actx, func() { stop(); cancel() }
}
