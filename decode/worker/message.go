package worker

import (
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/ratelimit"
)

// msgDecoder decodes the frames of one raw message with one protocol's
// FrameDecoder: the part of the decoder stage that is the same whether the
// observations are published (Worker) or applied in place (Feed). Its
// buffers are reused from message to message, so a steady stream decodes
// without allocating.
type msgDecoder struct {
	dec     FrameDecoder
	scratch []byte
	// clocks models each sensor's clock (issue 30). Every instance reads
	// the same raw stream in the same order, so every instance maps the
	// same frames to the same times.
	clocks sensorclock.Clocks
	// cur is the sensor clock of the message being decoded; dups and
	// resets count what it found in it.
	cur *sensorclock.Model
	// nsTimes: the message's per-frame times are nanoseconds (framing
	// lpt), not Beast timestamps.
	nsTimes bool
	// stamp is what the message says of its frames' times, read once.
	stamp sensorclock.Stamp
	// timed receives the message's frames with a Beast timestamp
	// (FeedConfig.Timed), gathered in timedFrames, with meta, the
	// message's (a field: a pointer to it costs no allocation).
	timed       func(meta *Meta, frames []TimedFrame)
	timedFrames []TimedFrame
	meta        Meta
	// modeS receives the message's decoded Mode S messages
	// (FeedConfig.ModeS), which decodedS (dec, the ADS-B decoder) gives,
	// gathered in modeSBatch when gatherS; seq is the raw message's
	// stream sequence (0: unknown).
	modeS      *ModeSTap
	decodedS   decodedModeS
	modeSBatch ModeSBatch
	gatherS    bool
	seq        uint64
	// limits, when not nil, are the per-sensor rate and byte limits,
	// spent at the message's storage time (issue 32).
	limits *ratelimit.Set
	// sbs is scratch for reading an SBS line's time.
	sbs adsb.SBSMessage
	// obs and dead are the results of the last decodeMessage, valid until
	// the next call.
	obs  []decode.Observation
	dead []deadLetter
}

// deadLetter is a frame that could not be decoded, and why.
type deadLetter struct {
	idx    int // the frame's index in its message; -1: the whole message
	frame  []byte
	reason string
	detail string
}

// decodeMessage decodes every frame of a raw message (framing is its
// Cuas-Framing header) into d.obs and d.dead, and counts them in m.
func (d *msgDecoder) decodeMessage(framing string, data []byte, meta Meta, m *Metrics) {
	d.obs, d.dead = d.obs[:0], d.dead[:0]
	proto := d.dec.Protocol()
	start := time.Now()
	// Decoded frames are counted per message, not per frame: a batch holds
	// up to bus.MaxFramesPerMessage frames and a labelled counter's look-up
	// costs about as much as decoding one.
	decoded := 0
	var err error
	// A receive time far ahead of the storage time would make a track
	// last_seen years in the future (issue 23): the message is a dead
	// letter, kept with its reason, rather than decoded.
	if reason, detail := refuseMessage(meta); reason != "" {
		d.dead = append(d.dead, deadLetter{idx: -1, frame: data, reason: reason, detail: detail})
	} else {
		d.cur, d.nsTimes, d.meta = d.clocks.Sensor(meta.Sensor), framing == bus.FramingLPT, meta
		d.stamp = sensorclock.Stamp{Kind: meta.Clock, Ns: d.nsTimes, SensorNs: meta.SensorNs, Arrival: meta.RecvUnixNano}
		d.timedFrames = d.timedFrames[:0]
		d.gatherS = d.modeS.active()
		d.modeSBatch.Frames = d.modeSBatch.Frames[:0]
		before := d.cur.Counts
		bucket, limited := d.bucket(meta), 0
		d.scratch, err = bus.EachFrameTS(framing, data, d.scratch, func(k int, ts uint64, frame []byte) error {
			if bucket != nil && bucket.Take(d.limits.Limits(), len(frame), meta.StoredUnixNano) != "" {
				limited++
				return nil
			}
			if d.decodeFrame(k, ts, frame) {
				decoded++
			}
			return nil
		})
		d.handOn()
		d.count(proto, m, &before)
		if limited > 0 {
			m.rateLimited.WithLabelValues(string(proto)).Add(float64(limited))
		}
	}
	if err != nil {
		d.dead = append(d.dead, deadLetter{idx: -1, frame: data, reason: "framing", detail: err.Error()})
	}
	p := string(proto)
	if decoded > 0 {
		m.decoded.WithLabelValues(p).Add(float64(decoded))
	}
	for _, dl := range d.dead {
		m.rejected.WithLabelValues(p, dl.reason).Inc()
	}
	m.duration.WithLabelValues(p).Observe(time.Since(start).Seconds())
	if meta.RecvUnixNano > 0 {
		m.lastFrame.WithLabelValues(p).Set(float64(meta.RecvUnixNano) / 1e9)
	}
}

// handOn hands the message's timestamped frames to FeedConfig.Timed and
// its Mode S messages to FeedConfig.ModeS.
func (d *msgDecoder) handOn() {
	if len(d.timedFrames) > 0 {
		d.timed(&d.meta, d.timedFrames)
	}
	if d.gatherS && len(d.modeSBatch.Frames) > 0 {
		d.modeSBatch.Meta, d.modeSBatch.Seq = &d.meta, d.seq
		d.modeS.hand(&d.modeSBatch)
	}
}

// bucket is the token bucket of meta's sensor, or nil when there are no
// limits or no storage time to spend them at. Tokens are spent at the
// storage time, not the decoding time: a decoder catching up a backlog, a
// replay and a live run refuse the same frames.
func (d *msgDecoder) bucket(meta Meta) *ratelimit.Bucket {
	if d.limits == nil || meta.StoredUnixNano == 0 {
		return nil
	}
	return d.limits.Bucket(meta.Sensor, meta.StoredUnixNano)
}

// MaxRecvAhead is how far a receiver's stated receive time may be ahead
// of JetStream's storage time (clock skew between a receiver and the
// server).
const MaxRecvAhead = 5 * time.Minute

// refuseMessage says why a whole raw message is a dead letter rather than
// decoded ("" when it is not): a sensor name outside the one rule
// (bus.ValidSensor; a raw publisher names it in its subject or
// Cuas-Sensor header, and the name reaches metrics, events and the
// history's exports, issue 32), a receive time far in the future, an
// unknown clock, or a receiver position that cannot be one (issue 31).
func refuseMessage(meta Meta) (reason, detail string) {
	if !bus.ValidSensor(meta.Sensor) {
		name := meta.Sensor
		if len(name) > bus.MaxSensorName {
			name = name[:bus.MaxSensorName] + "…"
		}
		return "sensor", fmt.Sprintf("sensor name %q: want %s", name, bus.SensorRule)
	}
	if bad := futureRecv(meta); bad != "" {
		return "recv_time", bad
	}
	if meta.ClockErr {
		return "framing", "unknown " + bus.HeaderClock + " (12mhz, gps or receiver)"
	}
	if meta.PositionErr != "" {
		return "sensor_position", meta.PositionErr
	}
	if meta.SensorTimeErr {
		return "sensor_time", bus.HeaderSensorTime + " is not a positive whole number of Unix nanoseconds"
	}
	return "", ""
}

// futureRecv says why meta's receive time is unacceptable, or "".
func futureRecv(meta Meta) string {
	if meta.StoredUnixNano == 0 || meta.RecvUnixNano <= meta.StoredUnixNano+int64(MaxRecvAhead) {
		return ""
	}
	ahead := time.Duration(meta.RecvUnixNano - meta.StoredUnixNano)
	return fmt.Sprintf("receive time %d is %s ahead of the storage time; at most %s is accepted", meta.RecvUnixNano, ahead.Round(time.Second), MaxRecvAhead)
}

// count adds what the sensor's clock model found in a message (its
// counts now against before) to the metrics: duplicates, clock resets,
// timestamps that cannot be the clock the input names, re-sent frames.
func (d *msgDecoder) count(proto decode.Protocol, m *Metrics, before *sensorclock.Counts) {
	for _, c := range []struct {
		vec    *prometheus.CounterVec
		n, was uint64
	}{
		{m.duplicates, d.cur.Duplicates, before.Duplicates},
		{m.clockResets, d.cur.Resets, before.Resets},
		{m.clockInvalid, d.cur.Invalid, before.Invalid},
		{m.resent, d.cur.Resent, before.Resent},
		{m.resentLive, d.cur.ResentLive, before.ResentLive},
	} {
		if c.n > c.was {
			c.vec.WithLabelValues(string(proto)).Add(float64(c.n - c.was))
		}
	}
}

// frameTime is the time of a frame with sensor timestamp ts (0: none) of
// the message being decoded, by the sensor's clock model; an SBS line's
// by its own generated time when sbsNs is not 0.
func (d *msgDecoder) frameTime(ts uint64, sbsNs int64) sensorclock.Time {
	if sbsNs > 0 {
		return d.cur.Map(sensorclock.Receiver, uint64(sbsNs), d.meta.RecvUnixNano)
	}
	return d.cur.Frame(ts, d.stamp)
}

// messageTime maps the time a transmitter stamped its message with (the
// decoder set o.SensorNs: a MAVLink system's time since boot, as its
// receiver clock; a Remote ID UA's GNSS time after the hour, as GPS) by
// that transmitter's clock model, as heard by meta's sensor (issue 30).
func (d *msgDecoder) messageTime(o *decode.Observation, meta Meta) {
	m := d.clocks.Transmitter(meta.Sensor, o.Key)
	var at sensorclock.Time
	if o.TimeSource == sensorclock.FromGPS {
		at = m.MapUTC(sensorclock.AfterHour(o.SensorNs, meta.RecvUnixNano), meta.RecvUnixNano)
	} else {
		at = m.Map(sensorclock.Receiver, uint64(o.SensorNs), meta.RecvUnixNano)
	}
	if meta.RecvUnixNano-at.UnixNano > int64(MaxMessageBehind) {
		// A transmitter's clock far behind its arrival is wrong (or a GNSS
		// time of another hour): the arrival is the better time.
		o.TimeUnixNano, o.SensorNs, o.SensorClock, o.TimeSource = meta.RecvUnixNano, 0, 0, sensorclock.Arrival
		return
	}
	o.TimeUnixNano, o.SensorNs, o.SensorClock, o.TimeSource = at.UnixNano, at.SensorNs, at.Clock, at.Source
}

// MaxMessageBehind is how far before its arrival a transmitter's own time
// of a message may place it: Remote ID and MAVLink are heard live, and a
// position stamped longer ago would look stale (or expire its track).
const MaxMessageBehind = 30 * time.Second

// decodeFrame decodes frame k of the message d.meta describes, whose
// sensor timestamp is ts (0: none), appending to d.obs or d.dead; it reports whether the frame decoded. An
// exact duplicate of a recent frame of the same sensor, or a frame its
// clock model judges re-sent, is dropped (counted), not decoded.
func (d *msgDecoder) decodeFrame(k int, ts uint64, frame []byte) bool {
	meta := &d.meta
	if frame == nil {
		d.dead = append(d.dead, deadLetter{idx: k, reason: "not_hex", detail: "line is not hex"})
		return false
	}
	key := d.stamp.Key(ts)
	var sbsNs int64
	if key == 0 && !d.nsTimes && isSBS(frame) {
		sbsNs = d.sbsGenerated(frame)
		key = uint64(sbsNs)
	}
	if d.cur.Duplicate(key, frame) {
		return false
	}
	resent := d.cur.Resent
	at := d.frameTime(ts, sbsNs)
	if d.cur.Resent != resent { // repeated by a reconnecting feeder (as Model.Judge reports)
		return false
	}
	if d.timed != nil && ts != 0 {
		d.gatherTimed(ts, frame)
	}
	n := len(d.obs)
	var err error
	d.obs, err = d.dec.Decode(frame, *meta, d.obs)
	if err != nil {
		d.obs = d.obs[:n]
		d.dead = append(d.dead, deadLetter{idx: k, frame: append([]byte(nil), frame...), reason: Reason(err), detail: err.Error()})
		return false
	}
	if d.gatherS {
		d.gatherModeS(at)
	}
	d.stampTimes(d.obs[n:], ts, at, *meta)
	Stamp(d.obs[n:], d.dec.Protocol(), *meta)
	return true
}

// TimedFrame is a Mode S frame and its sensor's timestamp, as
// FeedConfig.Timed is handed it.
type TimedFrame struct {
	// TS is the Beast timestamp: a 12 MHz count or GPS time of day
	// (Meta.Clock says which).
	TS  uint64
	Len uint8 // 7 or 14
	Msg [14]byte
}

// gatherTimed keeps a timestamped Mode S frame for FeedConfig.Timed: a
// Beast record's timestamp as it is, and a sensor time from a
// GPS-disciplined clock (framing lpt, UTC ns: the single-frame intake's
// Cuas-Sensor-Ns with Cuas-Clock gps) as the Radarcape-style Beast
// timestamp it equals, seconds of the UTC day above 30 bits of
// nanoseconds. Nanoseconds of a free-running clock are no Beast count,
// and are not handed over. The frame is copied: frame is the framing's
// scratch, valid only until the next frame.
func (d *msgDecoder) gatherTimed(ts uint64, frame []byte) {
	if len(frame) != 7 && len(frame) != 14 {
		return
	}
	switch {
	case !d.nsTimes:
	case d.meta.Clock == sensorclock.GPS:
		ofDay := ts % 86400e9
		ts = ofDay/1e9<<30 | ofDay%1e9
	default:
		return
	}
	f := TimedFrame{TS: ts, Len: uint8(len(frame))}
	copy(f.Msg[:], frame)
	d.timedFrames = append(d.timedFrames, f)
}

// sbsGenerated is an SBS line's own time (issue 30): its "generated" date
// and time (fields 7–8) read as Unix nanoseconds, 0 when it has none. The
// format names no zone (dump1090 and readsb write local time), so the
// time is modelled as the sensor's receiver clock: the model's anchor
// absorbs any constant offset, and the differences between lines — what
// fusion judges — stay the producer's.
func (d *msgDecoder) sbsGenerated(line []byte) int64 {
	if adsb.ParseSBS(line, &d.sbs) != nil || !d.sbs.HasGenerated {
		return 0
	}
	return max(d.sbs.Generated.UnixNano(), 0)
}

// stampTimes gives a frame's observations their time (issue 30): the
// message's own, when the decoder read one (o.SensorNs), else the frame's
// sensor time at (the arrival when the sensor gave none); ts is the raw
// sensor timestamp.
func (d *msgDecoder) stampTimes(obs []decode.Observation, ts uint64, at sensorclock.Time, meta Meta) {
	for j := range obs {
		o := &obs[j]
		switch {
		case o.SensorNs != 0 && o.SensorClock == 0:
			d.messageTime(o, meta)
		case o.TimeUnixNano == 0:
			o.TimeUnixNano, o.SensorNs, o.SensorClock, o.TimeSource = at.UnixNano, at.SensorNs, at.Clock, at.Source
			o.SensorTicks = ts
		}
	}
}

// Stamp completes observations a FrameDecoder made of one frame with what
// the message around the frame says: the protocol, and the sensor,
// receive time, signal and product type where the frame did not say them.
// A caller that decodes frames without a Feed (the false-alarm
// scenarios) stamps them as the Feed does, except that frames keep the
// receive time: the receiver clock models (issue 30) are the Feed's.
func Stamp(obs []decode.Observation, proto decode.Protocol, meta Meta) {
	for j := range obs {
		o := &obs[j]
		o.Protocol = proto
		if o.Sensor == "" {
			o.Sensor = meta.Sensor
		}
		if o.TimeUnixNano == 0 {
			o.TimeUnixNano = meta.RecvUnixNano
		}
		o.IngestUnixNano = meta.IngestUnixNano
		o.Simulated = meta.Simulated
		if o.Signal == 0 {
			o.Signal = meta.Signal
		}
		if o.ProductType == 0 {
			o.ProductType = meta.ProductType // issue 25
		}
	}
}

// MaxDeadLetterBytes is how much of a refused frame or message a dead
// letter keeps (the largest frame of any protocol, a MAVLink frame's
// bound): enough to see what a sender sent, while a flood of garbage
// messages near bus.MaxMessageBytes does not copy itself whole into
// CUAS_DEAD (issue 32). A cut dead letter says so in Cuas-Truncated.
const MaxDeadLetterBytes = 64 << 10

// deadMsg is the CUAS_DEAD message of a dead letter of raw message seq. Its
// de-duplication id derives from the raw message, so every instance and
// every redelivery that decodes the same frame stores it once.
func deadMsg(protocol string, seq uint64, meta Meta, d deadLetter) *nats.Msg {
	msg := &nats.Msg{Subject: bus.DeadSubject(protocol), Data: d.frame, Header: nats.Header{}}
	if len(d.frame) > MaxDeadLetterBytes {
		msg.Data = d.frame[:MaxDeadLetterBytes]
		msg.Header.Set(bus.HeaderTruncated, strconv.Itoa(len(d.frame)))
	}
	msg.Header.Set(bus.HeaderReason, d.reason+": "+d.detail)
	msg.Header.Set(bus.HeaderSensor, meta.Sensor)
	msg.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(meta.RecvUnixNano, 10))
	msg.Header.Set(bus.HeaderMsgID, "d"+strconv.FormatUint(seq, 10)+"-"+strconv.Itoa(d.idx))
	return msg
}
