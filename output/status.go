package output

import "time"

// SinkStatus is the state of one sink of an output, as GET /v1/outputs
// shows it.
type SinkStatus struct {
	// Name is the output's name ("tak-server ssl://tak.example:8089").
	Name string `json:"name"`
	// Kind is the kind of output ("cot-udp", "tak-server").
	Kind string `json:"kind"`
	// Target is where it sends (an address or URL, never a credential).
	Target string `json:"target"`
	// Connected: the sink can deliver now (a UDP socket is always
	// "connected" once open).
	Connected bool `json:"connected"`
	// LastError is the last delivery or connection error, if any.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	// Sent, Dropped (queue full) and Failed (write errors) count events.
	Sent    uint64 `json:"sent"`
	Dropped uint64 `json:"dropped"`
	Failed  uint64 `json:"failed"`
	// Queued is the number of events waiting in the sink's queue.
	Queued int `json:"queued"`
	// Format is the wire format the sink sends (CoT/TAK: "CoT XML" or "TAK
	// Protocol version 1"; a TAK Server stream's is the one agreed on the
	// current connection); empty where it has no choice.
	Format string `json:"format,omitempty"`
}

// Describer is implemented by outputs that can report their sinks.
type Describer interface {
	Sinks() []SinkStatus
}
