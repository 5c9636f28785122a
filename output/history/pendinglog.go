package history

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
)

// pendingLog is the file of points not yet in chunks: records of
// [length uint32][CRC-32C uint32][packed points], appended with one
// write each and emptied after each compaction. A write returned is in
// the kernel's page cache, which a killed process does not take with it;
// the file is not synced, so a power cut can lose what it holds (at most
// compactEvery of points). A torn last record (a crash mid-write) fails
// its length or CRC and is ignored with whatever follows.
type pendingLog struct {
	f    *os.File
	size int64 // the end of the last whole record
	buf  []byte
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openPendingLog opens (creating) the log at path and returns the
// records it holds.
func openPendingLog(path string) (*pendingLog, [][]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, wrap("open pending log", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, wrap("read pending log", err)
	}
	var records [][]byte
	size := int64(0)
	for len(data) >= 8 {
		n := binary.LittleEndian.Uint32(data)
		if uint64(len(data)-8) < uint64(n) || crc32.Checksum(data[8:8+n], crcTable) != binary.LittleEndian.Uint32(data[4:]) {
			break // torn or garbage: the end of what was written whole
		}
		records = append(records, data[8:8+n])
		data = data[8+n:]
		size += 8 + int64(n)
	}
	l := &pendingLog{f: f, size: size}
	// Appends go after the last whole record, over any torn tail.
	if err := l.truncate(size); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return l, records, nil
}

// append writes one record.
func (l *pendingLog) append(rec []byte) error {
	if len(rec) > 1<<31 {
		return wrap("pending log", errors.New("record too large"))
	}
	l.buf = binary.LittleEndian.AppendUint32(l.buf[:0], uint32(len(rec)))
	l.buf = binary.LittleEndian.AppendUint32(l.buf, crc32.Checksum(rec, crcTable))
	l.buf = append(l.buf, rec...)
	if _, err := l.f.Write(l.buf); err != nil {
		// Cut a partial write off, so that later records stay readable.
		return errors.Join(wrap("pending log", err), l.truncate(l.size))
	}
	l.size += int64(len(l.buf))
	return nil
}

// reset empties the log.
func (l *pendingLog) reset() error { return l.truncate(0) }

// truncate cuts the log to size and writes on from there.
func (l *pendingLog) truncate(size int64) error {
	if err := l.f.Truncate(size); err != nil {
		return wrap("pending log", err)
	}
	if _, err := l.f.Seek(size, io.SeekStart); err != nil {
		return wrap("pending log", err)
	}
	l.size = size
	return nil
}

func (l *pendingLog) close() error {
	if l == nil {
		return nil
	}
	return wrap("pending log", l.f.Close())
}
