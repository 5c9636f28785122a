package ledger

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func sampleBatch() batch {
	return batch{
		first: 41,
		entries: []batchEntry{
			{time: 1_700_000_000_000_000_000, env: []byte(`{"payloadType":"a","payload":"","signatures":[]}`)},
			{time: 1, env: []byte{}},
			{time: -5, env: bytes.Repeat([]byte{0xff}, 300)},
		},
		checkpoint: []byte("cuasd/x\n44\nAAAA\n"),
		vkey:       []byte("cuasd/x+01234567+AQ=="),
	}
}

func TestBatchRoundTrip(t *testing.T) {
	b := sampleBatch()
	enc := b.appendTo(nil)
	var got batch
	if err := decodeBatch(&got, enc); err != nil {
		t.Fatal(err)
	}
	if got.first != b.first || len(got.entries) != len(b.entries) ||
		!bytes.Equal(got.checkpoint, b.checkpoint) || !bytes.Equal(got.vkey, b.vkey) {
		t.Fatalf("decoded %+v, want %+v", got, b)
	}
	for i := range b.entries {
		if got.entries[i].time != b.entries[i].time || !bytes.Equal(got.entries[i].env, b.entries[i].env) {
			t.Errorf("entry %d: got %+v, want %+v", i, got.entries[i], b.entries[i])
		}
	}
}

func TestBatchDecodeRejects(t *testing.T) {
	good := sampleBatch()
	enc := good.appendTo(nil)
	uv := binary.AppendUvarint
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"bad magic", append([]byte("CUL2"), enc[4:]...)},
		{"magic only", []byte(batchMagic)},
		{"zero entries", uv(uv([]byte(batchMagic), 0), 0)},
		{"count beyond data", uv(uv([]byte(batchMagic), 0), 1000)},
		{"truncated", enc[:len(enc)-1]},
		{"trailing byte", append(append([]byte{}, enc...), 0)},
		{"entry length beyond data", uv(uv(uv(uv(uv([]byte(batchMagic), 0), 1), 7), 200), 1)},
		{"index overflow", uv(uv([]byte(batchMagic), ^uint64(0)), 2)},
		{"overlong varint", append([]byte(batchMagic), bytes.Repeat([]byte{0xff}, 11)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b batch
			if err := decodeBatch(&b, tt.data); KindOf(err) != KindIntegrity {
				t.Errorf("decodeBatch = %v, want an integrity error", err)
			}
		})
	}
}

func TestBatchDecodeAllocs(t *testing.T) {
	b := sampleBatch()
	enc := b.appendTo(nil)
	var got batch
	_ = decodeBatch(&got, enc)
	if n := testing.AllocsPerRun(100, func() { _ = decodeBatch(&got, enc) }); n != 0 {
		t.Errorf("decodeBatch allocates %v times, want 0", n)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	b := sampleBatch()
	f.Add(b.appendTo(nil))
	f.Add([]byte(batchMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b batch
		if err := decodeBatch(&b, data); err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes the same.
		var again batch
		if err := decodeBatch(&again, b.appendTo(nil)); err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if again.first != b.first || len(again.entries) != len(b.entries) ||
			!bytes.Equal(again.checkpoint, b.checkpoint) || !bytes.Equal(again.vkey, b.vkey) {
			t.Fatal("re-encoded batch decodes differently")
		}
		for i := range b.entries {
			if again.entries[i].time != b.entries[i].time || !bytes.Equal(again.entries[i].env, b.entries[i].env) {
				t.Fatalf("entry %d differs after re-encoding", i)
			}
		}
	})
}

func BenchmarkDecodeBatch(b *testing.B) {
	bt := batch{first: 1000, checkpoint: bytes.Repeat([]byte("c"), 200), vkey: bytes.Repeat([]byte("k"), 90)}
	for i := range 500 {
		bt.entries = append(bt.entries, batchEntry{time: int64(i), env: bytes.Repeat([]byte("e"), 1200)})
	}
	enc := bt.appendTo(nil)
	var got batch
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if err := decodeBatch(&got, enc); err != nil {
			b.Fatal(err)
		}
	}
}
