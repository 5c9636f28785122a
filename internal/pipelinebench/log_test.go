package pipelinebench

import (
	"io"
	"log/slog"
)

func nopLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
