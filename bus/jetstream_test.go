package bus_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

// The KV keeps the semantics the packages rely on: Create refuses a
// present key, Update and Delete compare the revision, Keys of an empty
// bucket is no error, and a watcher delivers the current values, a nil
// marker, then changes with deletions marked.
func TestKV(t *testing.T) {
	ctx := context.Background()
	kv, err := natstest.Start(t).JetStream().KeyValue(ctx, bus.KVConfig{Bucket: "T", History: 5})
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := kv.Keys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("empty bucket: keys %v, err %v", keys, err)
	}
	rev, err := kv.Create(ctx, "a", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "a", []byte("2")); !errors.Is(err, bus.ErrKeyExists) {
		t.Fatalf("second Create: %v, want ErrKeyExists", err)
	}
	if _, err := kv.Update(ctx, "a", []byte("2"), rev+10); err == nil {
		t.Fatal("Update with a wrong revision succeeded")
	}
	if err := kv.Delete(ctx, "a", rev+10); err == nil {
		t.Fatal("Delete with a wrong revision succeeded")
	}
	if _, err := kv.Get(ctx, "missing"); !errors.Is(err, bus.ErrKeyNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrKeyNotFound", err)
	}
	if _, err := kv.Put(ctx, "b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	w, err := kv.WatchAll(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var initial []string
	for e := range w.Updates() {
		if e == nil {
			break
		}
		initial = append(initial, e.Key+"="+string(e.Value))
	}
	slices.Sort(initial)
	if !slices.Equal(initial, []string{"a=1", "b=x"}) {
		t.Fatalf("initial values %v", initial)
	}
	if err := kv.Delete(ctx, "a", rev); err != nil {
		t.Fatal(err)
	}
	if e := <-w.Updates(); e == nil || e.Key != "a" || !e.Deleted {
		t.Fatalf("after Delete the watcher sent %+v, want a deletion of a", e)
	}
	if keys, err := kv.Keys(ctx); err != nil || !slices.Equal(keys, []string{"b"}) {
		t.Fatalf("keys %v, err %v", keys, err)
	}
}

// A watcher stopped before its values were all read ends and closes its
// channel (alert.Store.List stops after the initial values).
func TestKVWatcherStopEarly(t *testing.T) {
	ctx := context.Background()
	kv, err := natstest.Start(t).JetStream().KeyValue(ctx, bus.KVConfig{Bucket: "T"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, err := kv.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := kv.WatchAll(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	<-w.Updates()
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	for range w.Updates() { // must end: the channel is closed
	}
	if err := w.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

// A durable consumer fetches what was published asynchronously, with the
// stream sequence in its metadata, and counts what is left.
func TestConsumerFetchAndAck(t *testing.T) {
	ctx := context.Background()
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	j := s.JetStream()
	var futures []bus.PubAckFuture
	for i := range 3 {
		m := nats.NewMsg(bus.RawSubject("adsb", "rx1"))
		m.Data = []byte{byte(i)}
		f, err := j.PublishAsync(m)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	for i, f := range futures {
		ack, err := f.Wait(ctx)
		if err != nil || ack.Sequence != uint64(i+1) || ack.Stream != bus.StreamRaw || f.Subject() != "cuas.raw.adsb.rx1" {
			t.Fatalf("ack %d: %+v %v (subject %s)", i, ack, err, f.Subject())
		}
	}
	c, err := j.EnsureConsumer(ctx, bus.StreamRaw, bus.ConsumerConfig{Durable: "t", FilterSubject: "cuas.raw.adsb.>", AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	msgs, end, err := c.Fetch(2, 0)
	if err != nil || end != nil || len(msgs) != 2 {
		t.Fatalf("first fetch: %d messages, end %v, err %v", len(msgs), end, err)
	}
	for i, m := range msgs {
		md, ok := m.Meta()
		if !ok || md.Sequence != uint64(i+1) || md.Delivered != 1 || m.Data()[0] != byte(i) {
			t.Fatalf("message %d: meta %+v %v, data %v", i, md, ok, m.Data())
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if pending, _, err := c.Pending(ctx); err != nil || pending != 1 {
		t.Fatalf("pending %d, err %v; want 1", pending, err)
	}
	if _, err := j.Consumer(ctx, bus.StreamRaw, "nobody"); !errors.Is(err, bus.ErrConsumerNotFound) {
		t.Fatalf("missing consumer: %v", err)
	}
}

// StreamEnd is the newest message's position as the server stored it:
// zero for an empty stream, then the sequence and storage time the
// message's own metadata carries; After orders positions by them.
func TestStreamEnd(t *testing.T) {
	ctx := context.Background()
	srv := natstest.StartWithStreams(t, bus.DefaultLimits())
	nc := srv.Connect(t)
	if end, err := bus.StreamEnd(ctx, nc, bus.StreamRaw); err != nil || end != (bus.StreamPos{}) {
		t.Fatalf("empty stream: %+v, %v; want the zero position", end, err)
	}
	for range 3 {
		if _, err := srv.JS.Publish(ctx, bus.RawPrefix+".adsb.rx1", []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	end, err := bus.StreamEnd(ctx, nc, bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	s, err := srv.JS.Stream(ctx, bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.GetMsg(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := (bus.StreamPos{Stored: last.Time.UnixNano(), Seq: 3}); end != want {
		t.Fatalf("end %+v, want the third message's %+v", end, want)
	}
	if !(bus.StreamPos{Stored: end.Stored, Seq: 4}).After(end) || (bus.StreamPos{Stored: end.Stored - 1, Seq: 9}).After(end) || end.After(end) {
		t.Fatal("After does not order by storage time, then sequence")
	}
	if !(bus.StreamPos{}).After(end) {
		t.Fatal("a position with neither time nor sequence is not after the end")
	}
	if _, err := bus.StreamEnd(ctx, nc, "NO_SUCH_STREAM"); err == nil {
		t.Fatal("no error for a stream that does not exist")
	}
}
