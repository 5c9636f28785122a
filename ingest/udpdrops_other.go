//go:build !linux

package ingest

import "syscall"

// UDPKernelDrops is not known outside Linux (no /proc/net/udp).
func UDPKernelDrops(syscall.Conn) (uint64, bool) { return 0, false }
