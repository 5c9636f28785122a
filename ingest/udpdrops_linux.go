package ingest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// UDPKernelDrops returns how many datagrams the kernel dropped for the
// UDP socket c because its receive buffer was full — datagrams cuasd
// never saw, so no counter of its own can know them (issue 32). It reads
// the socket's line of /proc/net/udp or /proc/net/udp6 (the "drops"
// column, found by the socket's inode); ok is false when that is not
// possible (not Linux, no /proc, the socket closed).
func UDPKernelDrops(c syscall.Conn) (drops uint64, ok bool) {
	ino, ok := socketInode(c)
	if !ok {
		return 0, false
	}
	for _, table := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		if d, found := dropsOf(table, ino); found {
			return d, true
		}
	}
	return 0, false
}

func socketInode(c syscall.Conn) (uint64, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var st syscall.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) }); err != nil || serr != nil {
		return 0, false
	}
	return st.Ino, true
}

// dropsOf finds the socket with inode ino in a /proc/net/udp table: the
// inode is the tenth column, drops the last.
func dropsOf(table string, ino uint64) (uint64, bool) {
	f, err := os.Open(table)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	want := strconv.FormatUint(ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 13 || fields[9] != want {
			continue
		}
		d, err := strconv.ParseUint(fields[len(fields)-1], 10, 64)
		return d, err == nil
	}
	return 0, false
}
