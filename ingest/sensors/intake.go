package sensors

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// Raw-subject protocols of the claims.
const (
	ProtocolRemoteID = "remoteid"
	ProtocolDJI      = "dji"
)

// Carrier is the Cuas-Carrier of the frames the intake publishes: a bare
// F3411 message pack.
const Carrier = "message_pack"

// Intake turns sensor messages into raw frames. One Intake serves one
// input; it is safe for concurrent use when Registry is.
type Intake struct {
	// Adapter names the input in metrics ("zmq", "json-udp", "serial").
	Adapter string
	// Hint is what the feed carries, when the content cannot tell.
	Hint droneclaim.Kind
	// Registry, when set, records every message per sensor.
	Registry *Registry
	Log      *slog.Logger

	assoc associator
}

// Handle parses one message heard from sensor and publishes the drone
// claim it carries; a status message updates the registry. A refused
// message is counted in cuasd_frames_dropped_total{reason="rejected_..."}
// and in the registry, logged at debug level, and returned as the
// *droneclaim.Error; Handle never stops on bad input.
func (in *Intake) Handle(ctx context.Context, sink ingest.Sink, sensor string, msg []byte) error {
	now := time.Now().UnixNano()
	m, err := droneclaim.Parse(msg, in.Hint)
	proto := ProtocolRemoteID
	if m.Kind == droneclaim.KindDJI || in.Hint == droneclaim.KindDJI {
		proto = ProtocolDJI
	}
	var frame ingest.Frame
	if err == nil && m.Kind != droneclaim.KindStatus {
		if !in.assoc.resolve(sensor, &m.Claim, now) {
			err = &droneclaim.Error{Reason: "no_identity", Detail: "no drone id, and no Basic ID heard from MAC " + m.Claim.MAC + " within 30 s"}
		} else {
			frame.Data, err = m.Claim.AppendPack(nil)
		}
	}
	if err != nil {
		in.reject(sink, proto, sensor, now, err)
		in.deadLetter(ctx, sink, proto, sensor, err, msg)
		return err
	}
	if m.Kind == droneclaim.KindStatus {
		in.Registry.status(sensor, in.Adapter, now, &m.Status)
		return nil
	}
	frame.RecvUnixNano, frame.Carrier = now, Carrier
	if m.Claim.HasRSSI {
		frame.Signal = m.Claim.RSSI
	}
	frame.ProductType = m.Claim.ProductType // issue 25: F3411 has no place for it
	in.Registry.heard(sensor, in.Adapter, now, &m.Claim)
	_, err = sink.PublishFrames(ctx, in.Adapter, proto, sensor, []ingest.Frame{frame})
	return err
}

// Counters are the label values of the input's frame counters: the
// protocols it may publish and a "rejected_<reason>" drop reason for every
// reason a message can be refused for, so that every series exists at 0
// before the first message (issue 24).
func (in *Intake) Counters() ingest.Counters {
	c := ingest.Counters{Adapter: in.Adapter, Protocols: []string{ProtocolRemoteID, ProtocolDJI}}
	if in.Hint == droneclaim.KindDJI {
		c.Protocols = []string{ProtocolDJI}
	}
	for _, r := range droneclaim.Reasons {
		c.DropReasons = append(c.DropReasons, "rejected_"+r)
	}
	return c
}

// IsPublishError tells an error of Handle that is a failed publish (worth
// a warning: the bus is unavailable or full) from a refused message
// (already counted and logged).
func IsPublishError(err error) bool {
	var de *droneclaim.Error
	return err != nil && !errors.As(err, &de)
}

// Refuse counts a message the input refused before parsing it (too large
// for its transport, say) under reason.
func (in *Intake) Refuse(sink ingest.Sink, sensor, reason string) {
	proto := ProtocolRemoteID
	if in.Hint == droneclaim.KindDJI {
		proto = ProtocolDJI
	}
	err := &droneclaim.Error{Reason: reason}
	in.reject(sink, proto, sensor, time.Now().UnixNano(), err)
	in.deadLetter(context.Background(), sink, proto, sensor, err, nil)
}

// deadLetter keeps a refused message in CUAS_DEAD when the sink can (the
// Publisher can); a failure to keep it is only logged: it is counted
// already.
func (in *Intake) deadLetter(ctx context.Context, sink ingest.Sink, proto, sensor string, err error, msg []byte) {
	dl, ok := sink.(ingest.DeadLetterer)
	if !ok {
		return
	}
	reason := "rejected_" + droneclaim.ReasonOf(err) + ": " + err.Error()
	if derr := dl.DeadLetter(ctx, proto, sensor, reason, msg); derr != nil && in.Log != nil {
		in.Log.Debug("sensor dead letter not kept", "sensor", sensor, "err", derr)
	}
}

func (in *Intake) reject(sink ingest.Sink, proto, sensor string, now int64, err error) {
	reason := droneclaim.ReasonOf(err)
	sink.Dropped(proto, in.Adapter, "rejected_"+reason, 1)
	in.Registry.rejected(sensor, in.Adapter, now, reason)
	if in.Log != nil {
		in.Log.Debug("sensor message refused", "adapter", in.Adapter, "sensor", sensor, "reason", reason, "err", err)
	}
}
