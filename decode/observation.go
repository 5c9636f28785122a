package decode

import "github.com/cuasd/cuasd/decode/sensorclock"

// Protocol names a broadcast protocol. The values are used in NATS subjects,
// metrics labels and JSON, so they are short, lower-case and stable.
type Protocol string

// The protocols cuasd decodes.
const (
	ADSB     Protocol = "adsb"
	RemoteID Protocol = "remoteid"
	MAVLink  Protocol = "mavlink"
	// DJI is DJI DroneID decoded by a field sensor (an AntSDR in a
	// WarDragon kit), relayed as an F3411 message pack (issue 25).
	DJI Protocol = "dji"
)

// Observation is one protocol-neutral report about one object, derived from
// one or more decoded frames. Fields are claims by the transmitter unless
// noted; the Has* flags say which optional values are present, so that a
// zero is never mistaken for a measurement.
type Observation struct {
	Protocol Protocol `json:"protocol"`
	// Key identifies the object within its protocol: the ICAO address
	// ("406B90"), the Remote ID UAS id, or "sysid-compid@sensor" for MAVLink.
	Key string `json:"key"`
	// Sensor is the receiver that heard the frame (receiver-side fact).
	Sensor string `json:"sensor,omitempty"`
	// TimeUnixNano is the frame's time in UTC (receiver-side fact): its
	// sensor's own time mapped by that sensor's clock model when the
	// sensor gave one (issue 30), otherwise the receive time.
	TimeUnixNano int64 `json:"time_unix_nano"`
	// SensorNs is the sensor's own time of the frame (ns) on the clock
	// epoch SensorClock names; two observations with the same non-zero
	// SensorClock are exactly SensorNs apart (issue 30). SensorClock is
	// local to the process that decoded the frame.
	SensorNs    int64  `json:"sensor_ns,omitempty"`
	SensorClock uint32 `json:"-"`
	// TimeSource says where TimeUnixNano came from: gps, receiver or
	// arrival.
	TimeSource sensorclock.Source `json:"time_source"`
	// SensorTicks is the frame's raw sensor timestamp as received (a Beast
	// record's 48-bit counter, 12 MHz or GPS per the input's clock), 0
	// when it had none: what multilateration compares across receivers.
	SensorTicks uint64 `json:"sensor_ticks,omitempty"`

	// Identity claims.
	ICAO       string `json:"icao,omitempty"`
	UASID      string `json:"uas_id,omitempty"`
	OperatorID string `json:"operator_id,omitempty"`
	Callsign   string `json:"callsign,omitempty"`
	// Category is a protocol-specific emitter/vehicle class: the ADS-B
	// emitter category ("A1".."D7"), the Remote ID UA type name, or the
	// MAVLink MAV_TYPE name.
	Category string `json:"category,omitempty"`
	// CategoryKind says which of those Category is.
	CategoryKind CategoryKind `json:"category_kind,omitempty"`
	// Transmitter is the carrier's transmitter address (Remote ID over
	// Wi-Fi or Bluetooth), which ties a UA's separate messages together.
	Transmitter string `json:"transmitter,omitempty"`
	// SystemID and ComponentID are MAVLink's; zero elsewhere.
	SystemID    uint8 `json:"system_id,omitempty"`
	ComponentID uint8 `json:"component_id,omitempty"`

	// Kinematics.
	HasPosition bool    `json:"has_position"`
	Lat         float64 `json:"lat,omitempty"`
	Lon         float64 `json:"lon,omitempty"`
	// PositionMethod says how the position was obtained, e.g. "cpr_global",
	// "cpr_local", "remoteid", "mavlink_global_position_int".
	PositionMethod string  `json:"position_method,omitempty"`
	HasAltitude    bool    `json:"has_altitude"`
	AltM           float64 `json:"alt_m,omitempty"`
	// AltKind is "baro", "geo" (GNSS, above the WGS-84 ellipsoid) or "msl".
	AltKind     string  `json:"alt_kind,omitempty"`
	HasVelocity bool    `json:"has_velocity"`
	SpeedMps    float64 `json:"speed_mps,omitempty"`
	HeadingDeg  float64 `json:"heading_deg,omitempty"`
	VRateMps    float64 `json:"vertical_rate_mps,omitempty"`
	// HAccuracyM and VAccuracyM are the transmitter's stated 95% bounds on
	// its horizontal and vertical position error in metres (Remote ID
	// accuracy codes, ADS-B NACp/GVA, MAVLink h_acc/v_acc); 0 is unknown.
	HAccuracyM float64 `json:"h_accuracy_m,omitempty"`
	VAccuracyM float64 `json:"v_accuracy_m,omitempty"`

	// Status claims.
	Emergency string `json:"emergency,omitempty"`
	Squawk    string `json:"squawk,omitempty"`
	// OperatorLat/Lon is the Remote ID operator (pilot) location claim.
	HasOperatorPosition bool    `json:"has_operator_position,omitempty"`
	OperatorLat         float64 `json:"operator_lat,omitempty"`
	OperatorLon         float64 `json:"operator_lon,omitempty"`

	// CPR is an undecoded ADS-B Compact Position Report: positions need a
	// pair of frames or a reference, which only fusion has.
	HasCPR     bool   `json:"has_cpr,omitempty"`
	CPROdd     bool   `json:"cpr_odd,omitempty"`
	CPRSurface bool   `json:"cpr_surface,omitempty"`
	CPRLat     uint32 `json:"cpr_lat,omitempty"`
	CPRLon     uint32 `json:"cpr_lon,omitempty"`
	// ModeSReply marks an observation from a Mode S reply (DF0/4/5/16/20/21)
	// whose address was recovered from its parity: it may only update an
	// aircraft seen recently, since any corrupted reply yields some address.
	ModeSReply bool `json:"mode_s_reply,omitempty"`
	// CommB is the undecoded 56-bit MB field of a Comm-B reply (DF20/21),
	// when HasCommB. Like CPR it is resolved by fusion: which register it
	// holds is inferred, and the inference is checked against the
	// aircraft's known ADS-B state, which only fusion has.
	HasCommB bool   `json:"has_comm_b,omitempty"`
	CommB    uint64 `json:"comm_b,omitempty"`

	// Signal is the receiver's signal level for this frame as its sensor
	// reported it (the Cuas-Signal header): RSSI in dBm from field sensors,
	// dBFS from Mode S receivers; 0 is unknown. Receiver-side fact, kept
	// per observation (hence per sensor) for multi-sensor work.
	Signal float64 `json:"signal,omitempty"`

	// IngestUnixNano is when cuasd first accepted the frame (pipeline
	// latency is measured from it; TimeUnixNano may be a replayed past).
	IngestUnixNano int64 `json:"ingest_unix_nano,omitempty"`
	// Simulated says a simulator made the frame (bus.HeaderSimulated):
	// tracked like any other, never passed off as received (issue 34).
	Simulated bool `json:"simulated,omitempty"`

	// Warnings are the decoder's plausibility findings (spoofing indicators).
	Warnings []string `json:"warnings,omitempty"`

	// Product claim (issue 25). Description is the transmitter's free text
	// that may name its product: the Remote ID Self-ID text (description
	// type 0), which a DJI DroneID receiver fills with the product name
	// ("DJI Mavic 3"). ProductType is DJI DroneID's product type number as
	// the sensor relayed it (the Cuas-Product-Type header); 0 is none.
	// Both are unauthenticated claims, matched against the drone database
	// by fusion (reference.MatchProduct).
	Description string `json:"description,omitempty"`
	ProductType uint16 `json:"product_type,omitempty"`
	// --- Issue 21: ADS-B address type, air/ground state, version,
	// integrity and intent (readsb's aircraft.json type, alt_baro "ground",
	// nic, rc, version, nac_v, sil, sil_type, nav_heading). Claims of this
	// one message; a value whose Has* flag is unset is absent. One codec
	// tail (flag flADSBInfo) carries the whole block. ---

	// AddrType is the message's address type, an adsb.AddressType
	// (adsb_icao, adsb_icao_nt, adsb_other, tisb_*, adsr_*, mode_s); 0 is
	// unknown (other protocols, SBS input).
	AddrType uint8 `json:"addr_type,omitempty"`
	// AirGround is the air/ground state the message states.
	AirGround AirGround `json:"air_ground,omitempty"`
	// PosTypeCode is the ES type code of a position message (5-8 surface,
	// 9-18 and 20-22 airborne; 0 for other messages): NIC and Rc follow
	// from it, NICB, the supplements A and C and the version, which only
	// fusion has together.
	PosTypeCode uint8 `json:"pos_type_code,omitempty"`
	// NICB is NIC supplement B, ME bit 8 of a DF17 or non-IMF DF18
	// airborne position (the single-antenna flag before version 2).
	NICB bool `json:"nic_b,omitempty"`
	// Version is the ADS-B version (DO-260 0, DO-260A 1, DO-260B 2) an
	// operational status message announces, when HasVersion.
	HasVersion bool  `json:"has_version,omitempty"`
	Version    uint8 `json:"version,omitempty"`
	// NICA is NIC supplement A (operational status, versions 1 and 2),
	// when HasNICA; NICC is supplement C (surface operational status,
	// version 2), when HasNICC.
	HasNICA bool `json:"has_nic_a,omitempty"`
	NICA    bool `json:"nic_a,omitempty"`
	HasNICC bool `json:"has_nic_c,omitempty"`
	NICC    bool `json:"nic_c,omitempty"`
	// NACv is the navigation accuracy category for velocity (0-4; airborne
	// velocity, version 2 surface operational status), when HasNACv.
	HasNACv bool  `json:"has_nac_v,omitempty"`
	NACv    uint8 `json:"nac_v,omitempty"`
	// SIL is the source integrity level (0-3) and SILType what it is per
	// (operational status, target state), when HasSIL.
	HasSIL  bool    `json:"has_sil,omitempty"`
	SIL     uint8   `json:"sil,omitempty"`
	SILType SILType `json:"sil_type,omitempty"`
	// NavHeadingDeg is the selected heading or track (degrees, 0-360) of
	// a target state and status message, when HasNavHeading.
	HasNavHeading bool    `json:"has_nav_heading,omitempty"`
	NavHeadingDeg float64 `json:"nav_heading_deg,omitempty"`
	// --- end of the issue 21 block. ---
}
