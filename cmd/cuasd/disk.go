package main

// Storage faults (issue 32): the free space of the data directory and of
// the embedded JetStream's store, watched against --disk-low-mark.

import (
	"context"
	"path/filepath"

	"github.com/cuasd/cuasd/internal/diskspace"
	"github.com/cuasd/cuasd/lifecycle"
)

// diskWatch is the component watching the free space. It starts after the
// bus, so that JetStream's store directory exists.
func (s *service) diskWatch() lifecycle.Component {
	c := s.stage("disk watch", func(ctx context.Context, rep lifecycle.Reporter) error { return s.disk.Run(ctx, rep) })
	c.Start = func(context.Context) error {
		stores := []diskspace.Store{{Name: "data directory", Path: s.cfg.DataDir}}
		if s.bus.Embedded() {
			stores = append(stores, diskspace.Store{Name: "jetstream", Path: filepath.Join(s.cfg.DataDir, "jetstream")})
		}
		s.disk = diskspace.New(diskspace.Config{Stores: stores, Low: uint64(s.cfg.DiskLowMark), OnRecover: s.storageRecovered}, s.reg)
		return nil
	}
	return c
}

// storageRecovered runs when a store is back above the high mark. When the
// embedded JetStream's filesystem was full meanwhile, its streams may hold
// a write error that refuses every later write (nats-server reopens a
// stream only when it restarts) or JetStream may have disabled itself:
// JetStream is restarted, and every consumer resumes from its durable
// position.
func (s *service) storageRecovered(st diskspace.Store, wasFull bool) {
	s.log.Info("disk: free space is back above the high mark", "store", st.Name, "path", st.Path, "was_full", wasFull)
	if !wasFull || st.Name != "jetstream" {
		return
	}
	if err := s.bus.RestartJetStream(); err != nil {
		s.log.Error("disk: cannot restart JetStream after the disk was full", "err", err)
		return
	}
	s.log.Warn("disk: restarted the embedded JetStream after the disk was full, to reopen streams stuck on write errors")
}

// storageLow is the board's StaleWhile: a
// store below its low mark.
func (s *service) storageLow() bool { return s.disk.Refuse() != nil }
