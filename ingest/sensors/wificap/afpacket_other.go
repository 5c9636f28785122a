//go:build !linux

package wificap

import (
	"errors"
	"log/slog"

	"github.com/cuasd/cuasd/ingest/sensors"
)

// Open reports that live capture needs Linux's AF_PACKET sockets.
func Open(spec string, _ *sensors.Registry, _ *slog.Logger) (*Source, error) {
	return nil, &Error{Op: "open " + spec, Err: errors.New("live Wi-Fi capture is supported on Linux only")}
}
