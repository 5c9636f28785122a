package bus

import (
	"fmt"
	"log/slog"
	"strings"
)

// serverLog is the embedded nats-server's logger: its warnings and errors
// go to cuasd's log at debug level (clients' mistakes are not cuasd's),
// and a client refused for a message over MaxMessageBytes ("maximum
// payload exceeded", then -ERR 'Maximum Payload Violation' and the
// connection closed) is counted through onOversize (issue 32).
type serverLog struct {
	log        *slog.Logger
	onOversize func()
}

func (l serverLog) Noticef(string, ...any) {}
func (l serverLog) Debugf(string, ...any)  {}
func (l serverLog) Tracef(string, ...any)  {}
func (l serverLog) Fatalf(format string, v ...any) {
	l.log.Error("nats-server: " + fmt.Sprintf(format, v...))
}
func (l serverLog) Warnf(format string, v ...any) {
	l.log.Debug("nats-server: " + fmt.Sprintf(format, v...))
}

func (l serverLog) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(msg, "maximum payload exceeded") && l.onOversize != nil {
		l.onOversize()
	}
	l.log.Debug("nats-server: " + msg)
}
