package bus

import (
	"strings"
	"time"
)

// Subjects. Tokens in braces are filled by the helpers below.
//
//	cuas.in.{protocol}.{sensor}      one frame per core NATS message
//	                                 (the single-frame intake, batched
//	                                 by cuasd into cuas.raw)
//	cuas.raw.{protocol}.{sensor}     raw frames from receivers       → stream CUAS_RAW
//	cuas.obs.{protocol}.p{NN}        normalised observations, batched
//	                                 per track-key partition          → stream CUAS_OBS
//	cuas.dead.{protocol}             frames that failed to decode    → stream CUAS_DEAD
//
// Events (JSON, package events; core NATS, for outputs and operators):
//
//	cuas.track.{protocol}.{key}      a track's state, and its loss
//	cuas.threat.{protocol}.{key}     a recorded gate decision
//	cuas.swarm                       swarms formed, changed, dissolved
//	cuas.zone.{id}                   geofences added, changed, deleted
//	cuas.alert.>                     alerts (package output/alert)
//	cuas.sensor.{id}                 sensor status reports (input feeds)
const (
	IntakePrefix = "cuas.in"
	RawPrefix    = "cuas.raw"
	ObsPrefix    = "cuas.obs"
	DeadPrefix   = "cuas.dead"

	TrackPrefix  = "cuas.track"
	ThreatPrefix = "cuas.threat"
	SwarmSubject = "cuas.swarm"
	ZonePrefix   = "cuas.zone"
	AlertPrefix  = "cuas.alert"
	SensorPrefix = "cuas.sensor"
)

// InternalPrefixes are the subjects of the pipeline's internal traffic
// (raw frames, observation batches, dead letters, ledger batches): NATS
// clients other than cuasd and admins may not read them. A new internal
// subject must be listed here.
var InternalPrefixes = []string{IntakePrefix, RawPrefix, ObsPrefix, DeadPrefix, "cuas.ledger"}

// EventSubjects are the subjects of every JSON event, as wildcards: what
// an event consumer (an output, `nats sub`) subscribes to.
var EventSubjects = []string{TrackPrefix + ".>", ThreatPrefix + ".>", SwarmSubject, ZonePrefix + ".>", AlertPrefix + ".>", SensorPrefix + ".>"}

// TrackSubject is the subject of a track's events: the protocol of its id
// prefix and the rest of the id as one token ("adsb:4CA1FA" →
// cuas.track.adsb.4CA1FA).
func TrackSubject(protocol, key string) string {
	return TrackPrefix + "." + Token(protocol) + "." + Token(key)
}

// ThreatSubject is the subject of a track's recorded decisions.
func ThreatSubject(protocol, key string) string {
	return ThreatPrefix + "." + Token(protocol) + "." + Token(key)
}

// ZoneSubject is the subject of a geofence's events.
func ZoneSubject(id string) string { return ZonePrefix + "." + Token(id) }

// SensorSubject is the subject of a sensor's status reports.
func SensorSubject(id string) string { return SensorPrefix + "." + Token(id) }

// Streams and buckets.
const (
	StreamRaw    = "CUAS_RAW"
	StreamObs    = "CUAS_OBS"
	StreamDead   = "CUAS_DEAD"
	StreamLedger = "CUAS_LEDGER"
	BucketZones  = "CUAS_ZONES"
)

// Headers carried by raw-frame messages. Receivers may set them; adapters
// always do.
const (
	// HeaderRecvTime is the receive time in Unix nanoseconds (decimal).
	HeaderRecvTime = "Cuas-Recv-Ns"
	// HeaderClock says what the sensor timestamps of the message are
	// (issue 30): "12mhz" (the default) a free-running 12 MHz counter, as
	// dump1090 and readsb stamp Beast records; "gps" GPS time,
	// Radarcape-style (seconds of the UTC day in the top 18 bits of the
	// 48-bit Beast timestamp, nanoseconds in the low 30, or a
	// Cuas-Sensor-Ns that is UTC from a GPS-disciplined clock); "receiver"
	// a Cuas-Sensor-Ns from the sensor's own free-running clock (the
	// default for that header). Messages stored before the header existed
	// read as "12mhz", which is what their Beast records held.
	HeaderClock = "Cuas-Clock"
	// HeaderSensorTime is a sensor-supplied time of the message's frames
	// in Unix nanoseconds on the sensor's own clock (decimal, optional;
	// Beast records carry theirs per record instead).
	HeaderSensorTime = "Cuas-Sensor-Ns"
	// HeaderSensor names the receiver (also the last subject token).
	HeaderSensor = "Cuas-Sensor"
	// HeaderSensorPosition is a receiver's own statement of its antenna's
	// position (issue 31): "LAT,LON,ALT", decimal degrees north and east
	// and metres above the WGS-84 ellipsoid ("47.3769,8.5417,520"; see
	// ParseSensorPosition). A Mode S receiver publishing straight to
	// cuas.raw or cuas.in sets it so that multilateration uses it without
	// configuration; a position configured in cuasd wins over it. A
	// malformed or out-of-range value makes the message a dead letter.
	HeaderSensorPosition = "Cuas-Sensor-Position"
	// HeaderProductType is a DJI DroneID product type number (decimal,
	// 1-255) relayed by a field sensor beside the F3411 pack that has no
	// place for it (issue 25); optional.
	HeaderProductType = "Cuas-Product-Type"
	// HeaderSignal is the receiver's signal level (decimal), optional: dBFS
	// from Mode S receivers, RSSI in dBm from field sensors.
	HeaderSignal = "Cuas-Signal"
	// HeaderFraming says how the body holds frames: "raw" (one frame, the
	// default), "lp" (length-prefixed batch) or "hexlines" (newline-separated hex).
	HeaderFraming = "Cuas-Framing"
	// HeaderCarrier names how a Remote ID frame is wrapped (message,
	// message_pack, wifi_beacon, wifi_nan, ble_adv_data, ble_pdu); absent
	// means recognise it from the bytes.
	HeaderCarrier = "Cuas-Carrier"
	// HeaderTruncated marks a dead letter kept only in part: the size of
	// the whole message, in bytes (sensor messages, issue 25).
	HeaderTruncated = "Cuas-Truncated"
	// HeaderReason is the dead-letter reason.
	HeaderReason = "Cuas-Reason"
	// HeaderIngestTime is when cuasd accepted the frame (Unix ns); pipeline
	// latency is measured from it.
	HeaderIngestTime = "Cuas-Ingest-Ns"
	// HeaderSeq is a sensor's sequence number of a single frame sent to the
	// intake (decimal, per sensor, increasing): a retry with the same
	// number is stored once.
	HeaderSeq = "Cuas-Seq"
	// HeaderLink is the network address a frame came from when that is
	// not the sensor itself (a MAVLink UDP peer "192.0.2.7:14551"):
	// metadata, never part of an identity, because it changes whenever a
	// link reconnects.
	HeaderLink = "Cuas-Link"
	// HeaderSimulated is "1" on frames a simulator made (cuasd serve
	// --demo, cuasd simulate): they are decoded and tracked like any other,
	// but the feeds that re-export what was received (Beast out, SBS,
	// aircraft.json) leave them out unless --demo-outputs (issue 34).
	HeaderSimulated = "Cuas-Simulated"
	// HeaderMsgID is NATS's de-duplication header.
	HeaderMsgID = "Nats-Msg-Id"
)

// IntakeSubject is the subject a sensor publishes single frames of protocol
// to, one per core NATS message (see ingest.Intake).
func IntakeSubject(protocol, sensor string) string {
	return IntakePrefix + "." + protocol + "." + Token(sensor)
}

// SplitSubject splits a subject of the shape prefix.{protocol}.{rest}, as
// RawSubject, IntakeSubject, TrackSubject and ThreatSubject build them,
// into its protocol and the rest; ok is false when the subject does not
// start with prefix or has nothing after the protocol (protocol is then
// what follows the prefix, if anything).
func SplitSubject(prefix, subject string) (protocol, rest string, ok bool) {
	after, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return "", "", false
	}
	return strings.Cut(after, ".")
}

// MaxSensorName is the longest sensor name.
const MaxSensorName = 64

// ValidSensor is the one rule for a sensor's name on every path (issue
// 32): the HTTP ingest and publish endpoints, the single-frame intake's
// subject and the raw subjects' sensor (header or last token) all take
// 1 to 64 ASCII letters, digits, '_' and '-', and nothing else. A name
// is a subject token, a metrics label and a column of the history's
// exports, so it must not carry dots, spaces, quotes or markup, nor
// begin a spreadsheet formula ('=', '+', '@'). Adapters name the
// sensors they derive from addresses to fit (ingest.PeerSensor).
func ValidSensor(s string) bool {
	if len(s) == 0 || len(s) > MaxSensorName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// SensorName makes s a valid sensor name (ValidSensor): every character
// outside the rule becomes '_', and it is cut to MaxSensorName bytes; an
// empty s is "_". Adapters name sensors they derive from addresses, device
// paths or interface names with it ("127.0.0.1:30005" → "127_0_0_1_30005").
func SensorName(s string) string {
	if ValidSensor(s) {
		return s
	}
	b := []byte(s)
	if len(b) > MaxSensorName {
		b = b[:MaxSensorName]
	}
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// SensorRule describes ValidSensor for error messages.
const SensorRule = "1 to 64 letters, digits, '_' or '-'"

// RawSubject is the subject a receiver publishes raw frames of protocol to.
func RawSubject(protocol, sensor string) string {
	return RawPrefix + "." + protocol + "." + Token(sensor)
}

// ObsPartitions is the number of track-key partitions of the observation
// subjects. Observations are published in batches per partition rather
// than one message per track key: at hundreds of thousands of frames a
// second, one JetStream message per observation is the bottleneck (see
// BENCHMARKS.md). A partition still has exactly one track key space, so a
// fusion owner can filter on cuas.obs.*.pNN.
const ObsPartitions = 16

// ObsPartition is the partition of a track key: FNV-1a of the key, modulo
// ObsPartitions. It is stable across versions and processes.
func ObsPartition(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % ObsPartitions)
}

var partitionTokens = func() (t [ObsPartitions]string) {
	for i := range t {
		t[i] = "p" + string(rune('0'+i/10)) + string(rune('0'+i%10))
	}
	return
}()

// ObsSubject is the subject of the observation batch of partition p.
func ObsSubject(protocol string, p int) string {
	return ObsPrefix + "." + protocol + "." + partitionTokens[p%ObsPartitions]
}

// DeadSubject is the dead-letter subject of a protocol.
func DeadSubject(protocol string) string { return DeadPrefix + "." + protocol }

// Token makes s safe as one subject token: NATS forbids '.', '*', '>' and
// whitespace inside a token, and an empty token.
func Token(s string) string {
	if s == "" {
		return "_"
	}
	if !strings.ContainsAny(s, ". *>\t\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', ' ', '*', '>', '\t', '\r', '\n':
			return '_'
		}
		return r
	}, s)
}

// Limits are the explicit JetStream limits of the pipeline's streams.
type Limits struct {
	RawMaxAge    time.Duration
	RawMaxBytes  int64
	ObsMaxAge    time.Duration
	ObsMaxBytes  int64
	DeadMaxAge   time.Duration
	DeadMaxBytes int64
	// DuplicateWindow is how long Nats-Msg-Id de-duplication remembers ids.
	DuplicateWindow time.Duration
	// Replicas is the stream replication factor (1 embedded, 3 on a cluster).
	Replicas int
}

// DefaultLimits are the limits used unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{
		RawMaxAge:       24 * time.Hour,
		RawMaxBytes:     4 << 30,
		ObsMaxAge:       time.Hour,
		ObsMaxBytes:     1 << 30,
		DeadMaxAge:      7 * 24 * time.Hour,
		DeadMaxBytes:    256 << 20,
		DuplicateWindow: 2 * time.Minute,
		Replicas:        1,
	}
}

// Alerts (issue 19, package output/alert): every state of an alert is
// published once per sink on cuas.alert.{sink}.{zone} into the stream
// CUAS_ALERTS, which each sink reads through its durable consumer; the KV
// bucket CUAS_ALERTS keeps each alert's delivery status.
const (
	StreamAlerts = "CUAS_ALERTS"
	BucketAlerts = "CUAS_ALERTS"
)

// AlertSubject is the subject of an alert message for one sink.
func AlertSubject(sink, zone string) string {
	return AlertPrefix + "." + Token(sink) + "." + Token(zone)
}

// Simulated reports whether a raw-frame message's headers mark it as a
// simulator's (HeaderSimulated).
func Simulated(h map[string][]string) bool {
	v := h[HeaderSimulated]
	return len(v) > 0 && v[0] == "1"
}
