package bus

import (
	"strings"
	"time"
)

// Subjects. Tokens in braces are filled by the helpers below.
//
//	cuas.raw.{protocol}.{sensor}     raw frames from receivers       → stream CUAS_RAW
//	cuas.obs.{protocol}.p{NN}        normalised observations, batched
//	                                 per track-key partition          → stream CUAS_OBS
//	cuas.dead.{protocol}             frames that failed to decode    → stream CUAS_DEAD
const (
	RawPrefix  = "cuas.raw"
	ObsPrefix  = "cuas.obs"
	DeadPrefix = "cuas.dead"
)

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
	// HeaderSensor names the receiver (also the last subject token).
	HeaderSensor = "Cuas-Sensor"
	// HeaderSignal is the receiver's signal level (dBFS, decimal), optional.
	HeaderSignal = "Cuas-Signal"
	// HeaderFraming says how the body holds frames: "raw" (one frame, the
	// default), "lp" (length-prefixed batch) or "hexlines" (newline-separated hex).
	HeaderFraming = "Cuas-Framing"
	// HeaderCarrier names how a Remote ID frame is wrapped (message,
	// message_pack, wifi_beacon, wifi_nan, ble_adv_data, ble_pdu); absent
	// means recognise it from the bytes.
	HeaderCarrier = "Cuas-Carrier"
	// HeaderReason is the dead-letter reason.
	HeaderReason = "Cuas-Reason"
	// HeaderIngestTime is when cuasd accepted the frame (Unix ns); pipeline
	// latency is measured from it.
	HeaderIngestTime = "Cuas-Ingest-Ns"
	// HeaderMsgID is NATS's de-duplication header.
	HeaderMsgID = "Nats-Msg-Id"
)

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
