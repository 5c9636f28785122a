//go:build !unix

package dirlock

import "os"

// Elsewhere than Unix the lock is advisory only: the file records the pid,
// but two processes are not kept apart.
func lockFile(*os.File) error   { return nil }
func unlockFile(*os.File) error { return nil }
