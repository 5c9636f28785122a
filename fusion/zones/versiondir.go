package zones

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/gate"
)

// keepFile writes the geofence version b (its JSON) to the version
// directory as <sha256>.json unless it is there. The bucket holds the
// version already; the file is the copy that outlives the bucket. A
// failure is logged, and returned: a geofence written through this
// instance is refused when its version cannot be kept (issue 32), one
// seen on the watch is not.
func (s *Store) keepFile(b []byte) error {
	if s.cfg.VersionDir == "" {
		return nil
	}
	path := filepath.Join(s.cfg.VersionDir, gate.DigestOf(b)+".json")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := writeFileAtomic(s.cfg.VersionDir, path, b); err != nil {
		s.log.Error("zones: cannot keep a geofence version on disk", "path", path, "err", err)
		return err
	}
	return nil
}

// writeFileAtomic writes b to path through a temporary file in dir, so a
// reader never sees part of a version.
func writeFileAtomic(dir, path string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".version-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// readFile returns the version with the digest from the version
// directory, or nil. Version checks it against its digest.
func (s *Store) readFile(digest string) []byte {
	if s.cfg.VersionDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.VersionDir, digest+".json"))
	if err != nil {
		return nil
	}
	return b
}

// restoreVersions writes every version of the version directory whose
// content matches its name back into the (recreated) bucket.
func (s *Store) restoreVersions(ctx context.Context) error {
	if s.cfg.VersionDir == "" {
		return nil
	}
	names, err := os.ReadDir(s.cfg.VersionDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return &Error{Op: "restore versions", Key: s.cfg.VersionDir, Err: err}
	}
	for _, n := range names {
		digest, ok := strings.CutSuffix(n.Name(), ".json")
		b := s.readFile(digest)
		if !ok || b == nil || gate.DigestOf(b) != digest {
			continue
		}
		if _, err := s.kv.Create(ctx, versionPrefix+digest, b); err != nil && !errors.Is(err, bus.ErrKeyExists) {
			return &Error{Op: "restore version", Key: digest, Err: err}
		}
	}
	return nil
}
