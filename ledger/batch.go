package ledger

import "encoding/binary"

// batchMagic opens every stored batch; the digit is the format version.
const batchMagic = "CUL1"

// A batch is the unit of group commit: the entries appended together, the
// checkpoint of the tree they complete, and the signed-note verifier key
// that signed it. It is stored as one message, so the entries and the
// checkpoint that commits to them become durable together (one sync) or
// not at all.
//
// Wire format (all integers unsigned LEB128 varints):
//
//	"CUL1" first count
//	count × ( time_unix_nano  len  envelope-JSON[len] )
//	len checkpoint[len]
//	len verifier-key[len]
//
// and nothing after.
type batch struct {
	first      uint64
	entries    []batchEntry
	checkpoint []byte // signed note, or bare body when unsigned
	vkey       []byte // signed-note verifier key text; empty when unsigned
}

type batchEntry struct {
	time int64  // Unix nanoseconds when the ledger accepted it
	env  []byte // the envelope's JSON bytes: the RFC 6962 leaf data
}

// appendTo appends the encoded batch to dst.
func (b *batch) appendTo(dst []byte) []byte {
	dst = append(dst, batchMagic...)
	dst = binary.AppendUvarint(dst, b.first)
	dst = binary.AppendUvarint(dst, uint64(len(b.entries)))
	for _, e := range b.entries {
		dst = binary.AppendUvarint(dst, uint64(e.time))
		dst = binary.AppendUvarint(dst, uint64(len(e.env)))
		dst = append(dst, e.env...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b.checkpoint)))
	dst = append(dst, b.checkpoint...)
	dst = binary.AppendUvarint(dst, uint64(len(b.vkey)))
	return append(dst, b.vkey...)
}

// decodeBatch parses data into b, reusing b.entries' storage. The decoded
// slices alias data. It allocates nothing once b.entries has grown to the
// batch size.
func decodeBatch(b *batch, data []byte) error {
	const op = "decode batch"
	if len(data) < len(batchMagic) || string(data[:len(batchMagic)]) != batchMagic {
		return errf(KindIntegrity, op, "bad magic", nil)
	}
	d := decoder{buf: data[len(batchMagic):]}
	b.first = d.uvarint()
	n := d.uvarint()
	// Every entry takes at least two bytes, which bounds count by the data
	// before anything is allocated for it.
	if d.bad || n == 0 || n > uint64(len(d.buf))/2 {
		return errf(KindIntegrity, op, "bad entry count", nil)
	}
	if b.first+n < b.first {
		return errf(KindIntegrity, op, "index overflow", nil)
	}
	if uint64(cap(b.entries)) < n {
		b.entries = make([]batchEntry, 0, n)
	}
	b.entries = b.entries[:0]
	for range n {
		t := d.uvarint()
		env := d.bytes()
		if d.bad {
			return errf(KindIntegrity, op, "truncated entry", nil)
		}
		b.entries = append(b.entries, batchEntry{time: int64(t), env: env})
	}
	b.checkpoint = d.bytes()
	b.vkey = d.bytes()
	if d.bad {
		return errf(KindIntegrity, op, "truncated trailer", nil)
	}
	if len(d.buf) != 0 {
		return errf(KindIntegrity, op, "trailing bytes", nil)
	}
	return nil
}

// decoder reads varints and length-prefixed bytes; bad latches on the first
// error so callers check once.
type decoder struct {
	buf []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.buf)) {
		d.bad = true
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}
