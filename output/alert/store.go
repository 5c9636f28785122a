package alert

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cuasd/cuasd/bus"
)

// Delivery statuses.
const (
	Pending   = "pending"
	Delivered = "delivered"
	Failed    = "failed"
)

// Record is an alert as GET /v1/alerts serves it: its latest message and
// where it went.
type Record struct {
	Message
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is the state of an alert's latest message at one sink.
type Delivery struct {
	Sink   string `json:"sink"`
	Status string `json:"status"`
	// Seq is the alert state (Message.Seq) this delivery is about.
	Seq       int       `json:"seq"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Store keeps alert records in the JetStream KV bucket CUAS_ALERTS
// (replicated like the streams), one key per alert id.
type Store struct {
	kv StoreKV
}

// StoreKV is the bucket of alert records (a *bus.KV).
type StoreKV interface {
	Get(ctx context.Context, key string) (bus.KVEntry, error)
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)
	WatchAll(ctx context.Context, ignoreDeletes bool) (*bus.KVWatcher, error)
}

// Buckets creates key-value buckets; *bus.JetStream implements it.
type Buckets interface {
	KeyValue(ctx context.Context, cfg bus.KVConfig) (*bus.KV, error)
}

// StoreConfig sizes the bucket.
type StoreConfig struct {
	Replicas int
	// MaxAge is how long an alert's record is kept (default 7 days).
	MaxAge time.Duration
}

// OpenStore creates or opens the bucket.
func OpenStore(ctx context.Context, js Buckets, c StoreConfig) (*Store, error) {
	if c.MaxAge == 0 {
		c.MaxAge = 7 * 24 * time.Hour
	}
	kv, err := js.KeyValue(ctx, bus.KVConfig{
		Bucket: bus.BucketAlerts, Description: "cuasd alerts and their delivery status", History: 1,
		TTL: c.MaxAge, Replicas: c.Replicas,
	})
	if err != nil {
		return nil, &Error{Msg: "open bucket " + bus.BucketAlerts, Err: err}
	}
	return &Store{kv: kv}, nil
}

// update applies fn to the record of id (a zero record when there is none)
// with optimistic concurrency: another instance or sink may write the same
// key, so a conflict re-reads and re-applies.
func (s *Store) update(ctx context.Context, id string, fn func(r *Record)) error {
	for try := 0; ; try++ {
		var r Record
		var rev uint64
		e, err := s.kv.Get(ctx, id)
		switch {
		case err == nil:
			rev = e.Revision
			if err := json.Unmarshal(e.Value, &r); err != nil {
				return &Error{Msg: "record " + id, Err: err}
			}
		case !errors.Is(err, bus.ErrKeyNotFound):
			return &Error{Msg: "read record " + id, Err: err}
		}
		fn(&r)
		b, _ := json.Marshal(&r)
		if rev == 0 {
			_, err = s.kv.Create(ctx, id, b)
		} else {
			_, err = s.kv.Update(ctx, id, b, rev)
		}
		if err == nil || try >= 8 {
			if err != nil {
				return &Error{Msg: "write record " + id, Err: err}
			}
			return nil
		}
	}
}

// put records a new state of an alert, pending at its sinks.
func (s *Store) put(ctx context.Context, m *Message, now time.Time) error {
	return s.update(ctx, m.ID, func(r *Record) {
		if r.Seq > m.Seq {
			return // a later state is already recorded (another instance)
		}
		r.Message = *m
		for _, sink := range m.Sinks {
			d := r.delivery(sink)
			if d.Seq < m.Seq {
				*d = Delivery{Sink: sink, Status: Pending, Seq: m.Seq, UpdatedAt: now}
			}
		}
	})
}

// delivered records the outcome of one attempt.
func (s *Store) attempt(ctx context.Context, id, sink string, seq int, status string, attempts int, lastErr string, now time.Time) error {
	return s.update(ctx, id, func(r *Record) {
		d := r.delivery(sink)
		if d.Seq > seq {
			return
		}
		*d = Delivery{Sink: sink, Status: status, Seq: seq, Attempts: attempts, LastError: lastErr, UpdatedAt: now}
	})
}

func (r *Record) delivery(sink string) *Delivery {
	for i := range r.Deliveries {
		if r.Deliveries[i].Sink == sink {
			return &r.Deliveries[i]
		}
	}
	r.Deliveries = append(r.Deliveries, Delivery{Sink: sink})
	return &r.Deliveries[len(r.Deliveries)-1]
}

// Filter selects alerts for List; empty fields match everything.
type Filter struct {
	State, Rule, Zone string
	// Limit caps the answer (default and maximum 1000).
	Limit int
}

// List returns the alerts that match f, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Record, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 1000
	}
	// One watcher delivers every current value in one pass (a Get per key
	// would be a round trip each).
	w, err := s.kv.WatchAll(ctx, true)
	if err != nil {
		return nil, &Error{Msg: "list alerts", Err: err}
	}
	defer w.Stop()
	var out []Record
	for e := range w.Updates() {
		if e == nil {
			break // the initial values are all delivered
		}
		var r Record
		if json.Unmarshal(e.Value, &r) != nil {
			continue
		}
		if (f.State == "" || r.State == f.State) && (f.Rule == "" || r.Rule == f.Rule) && (f.Zone == "" || r.Zone.ID == f.Zone) {
			sortDeliveries(r.Deliveries)
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return b.OpenedAt.Compare(a.OpenedAt) })
	if len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Get returns one alert.
func (s *Store) Get(ctx context.Context, id string) (Record, bool, error) {
	var r Record
	if !validID(id) {
		return r, false, nil
	}
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, bus.ErrKeyNotFound) || errors.Is(err, bus.ErrKeyDeleted) {
		return r, false, nil
	}
	if err != nil {
		return r, false, &Error{Msg: "read alert", Err: err}
	}
	if err := json.Unmarshal(e.Value, &r); err != nil {
		return r, false, &Error{Msg: "alert " + id, Err: err}
	}
	sortDeliveries(r.Deliveries)
	return r, true, nil
}

func sortDeliveries(d []Delivery) {
	slices.SortFunc(d, func(a, b Delivery) int { return strings.Compare(a.Sink, b.Sink) })
}

// validID says whether id can be an alert id (and a KV key).
func validID(id string) bool {
	if len(id) < 4 || len(id) > 64 || id[:3] != "al-" {
		return false
	}
	for _, c := range id[3:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
