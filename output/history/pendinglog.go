package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
)

// pendingLog is the file of points not yet in chunks: a header
// (pendingMagic), then records of [length uint32][CRC-32C uint32][payload],
// appended with one write each and emptied (to its header) after each
// compaction. A write returned is in the kernel's page cache, which a
// killed process does not take with it; the file is not synced, so a
// power cut can lose what it holds (at most compactEvery of points). A
// torn last record (a crash mid-write) fails its length or CRC and is
// ignored with whatever follows.
//
// A record's payload is segments saying what an Insert appended to the
// chunks held in memory, as the bytes the chunks got (chunkLog): the
// points are packed once, for the chunks, and the log copies them. A log
// without the header is of the first format, whose records are runs of
// points packed on their own (unpackPending): it is still read.
type pendingLog struct {
	f    *os.File
	size int64 // the end of the last whole record
	buf  []byte
	// headed: the file starts with pendingMagic (else it holds records
	// of the first format, until the first reset).
	headed bool
}

// pendingMagic starts a pending log of the second format. Read as the
// first format's first record it is a length of 1.4 GB, longer than any
// log: a first-format log never starts with it, and a cuasd before this
// format takes the file for a torn record.
const pendingMagic = "CUASPL2\n"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openPendingLog opens (creating) the log at path and returns the
// records it holds and whether they are of the first format.
func openPendingLog(path string) (l *pendingLog, records [][]byte, first bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, false, wrap("open pending log", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, false, wrap("read pending log", err)
	}
	l = &pendingLog{f: f}
	size := int64(0)
	if l.headed = bytes.HasPrefix(data, []byte(pendingMagic)); l.headed {
		data, size = data[len(pendingMagic):], int64(len(pendingMagic))
	}
	records, n := readRecords(data)
	size += n
	// Appends go after the last whole record, over any torn tail.
	if err := l.truncate(size); err != nil {
		_ = f.Close()
		return nil, nil, false, err
	}
	if size == 0 {
		// Empty (new, or a first-format log with nothing whole in it):
		// the second format from the start.
		if err := l.reset(); err != nil {
			_ = f.Close()
			return nil, nil, false, err
		}
	}
	return l, records, !l.headed, nil
}

// readRecords splits data into its whole records, and returns them and
// the bytes they take.
func readRecords(data []byte) (records [][]byte, size int64) {
	for len(data) >= 8 {
		n := binary.LittleEndian.Uint32(data)
		if uint64(len(data)-8) < uint64(n) || crc32.Checksum(data[8:8+n], crcTable) != binary.LittleEndian.Uint32(data[4:]) {
			break // torn or garbage: the end of what was written whole
		}
		records = append(records, data[8:8+n])
		data = data[8+n:]
		size += 8 + int64(n)
	}
	return records, size
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

// reset empties the log to its header (writing the header when the log
// was of the first format).
func (l *pendingLog) reset() error {
	if l.headed {
		return l.truncate(int64(len(pendingMagic)))
	}
	if err := l.truncate(0); err != nil {
		return err
	}
	if _, err := l.f.Write([]byte(pendingMagic)); err != nil {
		return errors.Join(wrap("pending log", err), l.truncate(0))
	}
	l.size, l.headed = int64(len(pendingMagic)), true
	return nil
}

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
