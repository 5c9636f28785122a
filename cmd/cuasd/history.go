package main

import (
	"path/filepath"
	"time"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/history"
)

// historyRecorder is the track-history output of issue 20, built once: the
// outputs component runs it and the HTTP layer reads it. Nil with
// --history=false.
func (s *service) historyRecorder() *history.Recorder {
	s.historyOnce.Do(func() {
		if !s.cfg.History {
			return
		}
		s.history = history.New(history.Config{
			Path:     filepath.Join(s.cfg.DataDir, "history.db"),
			MaxAge:   time.Duration(s.cfg.HistoryMaxAge),
			MaxBytes: int64(s.cfg.HistoryMaxBytes),
			Logger:   s.log,
			Registry: s.reg,
		})
	})
	return s.history
}

// historyOutputs is the history recorder as an output, when enabled.
func (s *service) historyOutputs() []output.Output {
	if h := s.historyRecorder(); h != nil {
		return []output.Output{h}
	}
	return nil
}

// historyReader is the history recorder for the HTTP layer; a nil
// interface when disabled, so the endpoints answer 503.
func (s *service) historyReader() httpapi.HistoryReader {
	if h := s.historyRecorder(); h != nil {
		return h
	}
	return nil
}
