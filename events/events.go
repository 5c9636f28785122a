package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/gate"
)

// Version is the schema version of every event ("v").
const Version = 1

// Event types ("type").
const (
	TypeTrackUpdate  = "track.update"
	TypeTrackLost    = "track.lost"
	TypeThreat       = "threat.decision"
	TypeSwarmFormed  = "swarm.formed"
	TypeSwarmChanged = "swarm.changed"
	TypeSwarmGone    = "swarm.dissolved"
	TypeZoneUpsert   = "zone.upsert"
	TypeZoneDeleted  = "zone.deleted"
	// TypeSensorState is a field sensor's state (issue 25).
	TypeSensorState = "sensor.state"
)

// Cadences of the event publisher.
const (
	// MinInterval is the shortest time between two updates of one track.
	MinInterval = time.Second
	// KeepAlive is how often an unchanged live track is announced again, so
	// that a consumer that starts late learns of it, and a consumer can
	// treat a track silent for longer than KeepAlive plus MinInterval as
	// gone even if it missed the "track.lost" event.
	KeepAlive = 15 * time.Second
	// ZoneRepeat is how often every zone is announced again.
	ZoneRepeat = time.Minute
	// SensorRepeat is how often every field sensor is announced again
	// (issue 25); a changed sensor is announced within a second.
	SensorRepeat = 10 * time.Second
)

// Header is what every event starts with.
type Header struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	// Time is when cuasd produced the event (not when a frame was received).
	Time time.Time `json:"time"`
	// Instance is the cuasd instance that published it (--instance).
	Instance string `json:"instance"`
}

// TrackEvent is published on cuas.track.{protocol}.{key}.
type TrackEvent struct {
	Header
	Track Track `json:"track"`
	// Assessment is the gate's latest view of the track; absent until the
	// track was evaluated (a track with no position is never evaluated).
	Assessment *Assessment `json:"assessment,omitempty"`
}

// ThreatEvent is published on cuas.threat.{protocol}.{key} when the gate
// records a decision: it changed, a breach started or ended, a first
// evaluation was above monitor, or this instance took the track over.
type ThreatEvent struct {
	Header
	// Reason is why the decision was recorded: decision_changed,
	// breach_started, breach_ended, first_evaluation, ownership_acquired.
	Reason string `json:"reason"`
	// PreviousDecision is the decision recorded before this one.
	PreviousDecision string `json:"previous_decision"`
	Threat           Threat `json:"threat"`
}

// SwarmEvent is published on cuas.swarm.
type SwarmEvent struct {
	Header
	Swarm Swarm `json:"swarm"`
}

// Swarm is a group of tracks moving as one (a connected component of the
// proximity graph, at least the minimum size).
type Swarm struct {
	ID string `json:"id"`
	// Members are track ids, sorted.
	Members []string `json:"members"`
	Size    int      `json:"size"`
	// Lat and Lon are the centroid of the members' positions.
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// ZoneEvent is published on cuas.zone.{id}.
type ZoneEvent struct {
	Header
	// Zone is the geofence; on zone.deleted only its id is set.
	Zone gate.Geofence `json:"zone"`
}

// Track is one fused track: the object of GET /v1/tracks and of track
// events. Optional measurements are pointers: absent means unknown, never
// zero.
type Track struct {
	TrackID string `json:"track_id"`
	// ID is the same as TrackID. Deprecated: use track_id; id is kept for
	// one release for clients of /v1/tracks.
	ID         string   `json:"id,omitempty"`
	Protocols  []string `json:"protocols"`
	ICAO       string   `json:"icao,omitempty"`
	UASID      string   `json:"uas_id,omitempty"`
	OperatorID string   `json:"operator_id,omitempty"`
	Callsign   string   `json:"callsign,omitempty"`
	Category   string   `json:"category,omitempty"`
	// CategoryKind says which scheme Category is in: "adsb_emitter" (A0–D7),
	// "ua_type" (ASTM F3411 UA type) or "mav_type" (MAVLink MAV_TYPE).
	CategoryKind decode.CategoryKind `json:"category_kind,omitempty"`
	Lat          *float64            `json:"lat,omitempty"`
	Lon          *float64            `json:"lon,omitempty"`
	PosMethod    string              `json:"position_method,omitempty"`
	// TimeSource says where the track's times come from (issue 30): gps
	// (the receiver's GPS clock), receiver (the receiver's own clock,
	// mapped to UTC) or arrival (the sensor gave no usable time).
	TimeSource  string   `json:"time_source,omitempty"`
	AltM        *float64 `json:"alt_m,omitempty"`
	AltKind     string   `json:"alt_kind,omitempty"`
	SpeedMps    *float64 `json:"speed_mps,omitempty"`
	HeadingDeg  *float64 `json:"heading_deg,omitempty"`
	VRateMps    *float64 `json:"vertical_rate_mps,omitempty"`
	OperatorLat *float64 `json:"operator_lat,omitempty"`
	OperatorLon *float64 `json:"operator_lon,omitempty"`
	// HAccuracyM and VAccuracyM are the source's stated 95% position
	// accuracy (Remote ID accuracy codes, ADS-B NACp, MAVLink eph/epv).
	HAccuracyM   *float64  `json:"h_accuracy_m,omitempty"`
	VAccuracyM   *float64  `json:"v_accuracy_m,omitempty"`
	Squawk       string    `json:"squawk,omitempty"`
	Emergency    string    `json:"emergency,omitempty"`
	Sensors      []string  `json:"sensors"`
	FirstSeen    time.Time `json:"first_seen"`
	LastSeen     time.Time `json:"last_seen"`
	Observations uint64    `json:"observations"`
	Warnings     []string  `json:"warnings,omitempty"`
	// History is, on GET /v1/tracks/{id}, the track's recent positions;
	// on a track event, the positions received since the track's previous
	// event (every one it holds for a track not announced before), so that
	// a consumer hears every fix although events come at most once a second.
	History []Point `json:"history,omitempty"`
	// PositionTime is when the position was received (readsb's seen_pos
	// is measured from it); absent without a position.
	PositionTime *time.Time `json:"position_time,omitempty"`
	// AirData is what the aircraft's Mode S Comm-B replies (DF20/21) said.
	AirData *AirData `json:"air_data,omitempty"`

	// Issue 25 (field sensors). Product is the product the broadcast
	// names (an unauthenticated claim) and the drone-database record it
	// matches; SensorSignals the last signal level each sensor in Sensors
	// measured for this track (only sensors that report one).
	Product       *Product       `json:"product,omitempty"`
	SensorSignals []SensorSignal `json:"sensor_signals,omitempty"`

	// --- Issue 21: readsb's per-aircraft ADS-B fields. ---

	// ADSB is an aircraft's address type, air/ground state, integrity and
	// intent as its own messages stated them; absent for other tracks.
	ADSB *ADSBInfo `json:"adsb,omitempty"`

	// Simulated is true when every frame of the track came from a
	// simulator (cuasd serve --demo, cuasd simulate; issue 34): the feeds
	// that re-export what was received leave it out unless --demo-outputs.
	Simulated bool `json:"simulated,omitempty"`

	// --- Issue 31: multilateration and claim verification. ---

	// PositionSource says where the position comes from: "broadcast" (the
	// transmitter's own claim) or "mlat" (located from the times its
	// transmissions reached several sensors); absent without a position.
	PositionSource string `json:"position_source,omitempty"`
	// MLAT is the last multilaterated fix's quality (aircraft only).
	MLAT *MLAT `json:"mlat,omitempty"`
	// Verification is the verdict on the aircraft's last checked ADS-B
	// position claim.
	Verification *Verification `json:"verification,omitempty"`
}

// MLAT is a multilaterated fix's quality: how many sensors' times it used,
// their RMS range residual and the 1-σ horizontal error estimate, metres.
type MLAT struct {
	Sensors   int     `json:"sensors"`
	ResidualM float64 `json:"residual_m"`
	ErrorM    float64 `json:"error_m"`
}

// Verification is the verdict on a position claim from the times of
// arrival: "verified" (the times put the transmitter within 500 m of its
// claim, and a claim further off would have been caught),
// "contradicted" (they put it further, significantly) or "unverifiable".
type Verification struct {
	Status string `json:"status"`
	// ResidualM is the RMS range residual of the times at the claim.
	ResidualM float64 `json:"residual_m"`
	// DistanceM is how far from the claim the times put the transmitter.
	DistanceM float64 `json:"distance_m"`
	Sensors   int     `json:"sensors"`
	// Time is when the checked transmission was sent.
	Time time.Time `json:"time"`
}

// ADSBInfo is what an aircraft's own Mode S and ADS-B messages said of its
// address type, air/ground state, position integrity and intent (issue 21:
// readsb's type, alt_baro "ground", nic, rc, version, nac_v, sil, sil_type
// and nav_heading); each value is the latest, absent when never received.
type ADSBInfo struct {
	// AddressType is readsb's "type": adsb_icao, adsb_icao_nt,
	// adsb_other, tisb_icao, tisb_other, tisb_trackfile, adsr_icao,
	// adsr_other, or mode_s (a DF17 aircraft before its first position).
	AddressType string `json:"address_type,omitempty"`
	// AirGround is "ground", "airborne" or "uncertain" (CA, flight status,
	// vertical status, surface or airborne positions).
	AirGround string `json:"air_ground,omitempty"`
	// NIC is the navigation integrity category (0-11) of the position and
	// RcM its containment radius in metres (0: unknown), from the position
	// messages' type codes, the NIC supplements and the version.
	NIC *int `json:"nic,omitempty"`
	RcM *int `json:"rc_m,omitempty"`
	// Version is the ADS-B version (0, 1, 2) the operational status
	// messages announced.
	Version *int `json:"version,omitempty"`
	// NACv is the navigation accuracy category for velocity (0-4).
	NACv *int `json:"nac_v,omitempty"`
	// SIL is the source integrity level (0-3) and SILType what its
	// probability is per: "perhour", "persample" or "unknown".
	SIL     *int   `json:"sil,omitempty"`
	SILType string `json:"sil_type,omitempty"`
	// NavHeadingDeg is the selected heading or track (degrees, 0-360) of
	// the target state and status messages.
	NavHeadingDeg *float64 `json:"nav_heading_deg,omitempty"`
}

// Product is a track's product claim (issue 25): what the broadcast says
// the aircraft is, and which drone-database record that names. A claim,
// never an identification: DroneID and Remote ID are unauthenticated.
type Product struct {
	// Claim is the product named: the DJI product type's name from the
	// code table, else the Self-ID text (which may name no product).
	Claim string `json:"claim,omitempty"`
	// ProductType is the DJI DroneID product type number, when relayed.
	ProductType *int `json:"product_type,omitempty"`
	// Text is the Self-ID text, when it differs from Claim.
	Text string `json:"text,omitempty"`
	// MatchedBy says how the claim was matched: "dji_product_type" (the
	// product type code table), "model_name", "alias", or "unknown" (no
	// record matches; nothing is guessed).
	MatchedBy string `json:"matched_by"`
	// ReferenceID and ReferenceName are the matched drone-database record
	// (GET /v1/drones/{id}); absent when unknown.
	ReferenceID   string `json:"reference_id,omitempty"`
	ReferenceName string `json:"reference_name,omitempty"`
}

// SensorSignal is the last signal level one sensor measured for a track
// (issue 25): RSSI in dBm from field sensors, or the signal level in dBFS
// from Mode S receivers; Time is when it was received.
type SensorSignal struct {
	Sensor     string    `json:"sensor"`
	RSSIDBm    *float64  `json:"rssi_dbm,omitempty"`
	SignalDBFS *float64  `json:"signal_dbfs,omitempty"`
	Time       time.Time `json:"time"`
}

// AirData is the Mode S enhanced-surveillance part of an aircraft track,
// from its Comm-B replies (registers 4,0, 4,4, 4,5, 5,0 and 6,0) in SI
// units; each value is the latest received, absent when never received.
type AirData struct {
	SelectedAltM       *float64  `json:"selected_alt_m,omitempty"`
	BaroSettingHPa     *float64  `json:"baro_setting_hpa,omitempty"`
	IASMps             *float64  `json:"ias_mps,omitempty"`
	TASMps             *float64  `json:"tas_mps,omitempty"`
	Mach               *float64  `json:"mach,omitempty"`
	MagneticHeadingDeg *float64  `json:"magnetic_heading_deg,omitempty"`
	RollDeg            *float64  `json:"roll_deg,omitempty"`
	WindSpeedMps       *float64  `json:"wind_speed_mps,omitempty"`
	WindFromDeg        *float64  `json:"wind_from_deg,omitempty"`
	TemperatureC       *float64  `json:"temperature_c,omitempty"`
	Updated            time.Time `json:"updated"`
}

// Point is one entry of a track's recent positions.
type Point struct {
	T    time.Time `json:"t"`
	Lat  float64   `json:"lat"`
	Lon  float64   `json:"lon"`
	AltM *float64  `json:"alt_m,omitempty"`
}

// Assessment is the gate's latest evaluation of a track, carried on track
// events so that an output (a CoT sink, a map) has the decision with the
// position it applies to.
type Assessment struct {
	Decision      string   `json:"decision"`
	Lambda        float64  `json:"lambda"`
	HumanDecision bool     `json:"human_decision_required"`
	Breach        bool     `json:"breach"`
	Geofence      string   `json:"geofence,omitempty"`
	GeofenceName  string   `json:"geofence_name,omitempty"`
	DistanceM     *float64 `json:"distance_m,omitempty"`
	Caps          []string `json:"caps"`
	// TopAxes are the three axes that contribute most to Λ.
	TopAxes      []AxisSummary `json:"top_axes,omitempty"`
	SwarmID      string        `json:"swarm_id,omitempty"`
	AllowListed  bool          `json:"allow_listed"`
	Side         string        `json:"side,omitempty"`
	ReceiptIndex *int64        `json:"receipt_index,omitempty"`
	// Class is what the track is: aircraft, drone or unknown (issue 33).
	Class string `json:"class,omitempty"`
}

// Axis is one of the 13 Λ axes in full: its value in [0, 1], weight, the
// inputs it was computed from (null when unknown) and a sentence of
// evidence.
type Axis struct {
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	Value    float64        `json:"value"`
	Weight   float64        `json:"weight"`
	Known    bool           `json:"known"`
	Inputs   map[string]any `json:"inputs"`
	Evidence string         `json:"evidence"`
}

// AxisSummary is one Λ axis in brief.
type AxisSummary struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Weight float64 `json:"weight"`
}

// Threat is one row of the threat board: a track evaluated against its
// most severe geofence (the object of GET /v1/threats/active and of threat
// events).
type Threat struct {
	TrackID       string       `json:"track_id"`
	Protocols     []string     `json:"protocols"`
	Identity      Identity     `json:"identity"`
	Lat           float64      `json:"lat"`
	Lon           float64      `json:"lon"`
	AltM          *float64     `json:"alt_m,omitempty"`
	SpeedMps      *float64     `json:"speed_mps,omitempty"`
	HeadingDeg    *float64     `json:"heading_deg,omitempty"`
	Lambda        float64      `json:"lambda"`
	Decision      string       `json:"decision"`
	HumanDecision bool         `json:"human_decision_required"`
	Caps          []string     `json:"caps"`
	Axes          []Axis       `json:"axes,omitempty"`
	Geofence      string       `json:"geofence,omitempty"`
	GeofenceName  string       `json:"geofence_name,omitempty"`
	Breach        bool         `json:"breach"`
	DistanceM     *float64     `json:"distance_m,omitempty"`
	ToBoundaryM   *float64     `json:"distance_to_boundary_m,omitempty"`
	SwarmID       string       `json:"swarm_id,omitempty"`
	Sensors       []string     `json:"sensors"`
	Warnings      []string     `json:"warnings,omitempty"`
	Trail         [][2]float64 `json:"trail,omitempty"`
	FirstSeen     time.Time    `json:"first_seen"`
	LastSeen      time.Time    `json:"last_seen"`
	ReceiptIndex  *int64       `json:"receipt_index,omitempty"`
	// Class is what the track is: aircraft, drone or unknown (issue 33).
	Class string `json:"class,omitempty"`
	// RawDecision is the latest evaluation's own decision; Decision is
	// the held one (hysteresis and dwell, issue 33), which differs while
	// a decision waits to fall.
	RawDecision string `json:"raw_decision,omitempty"`
	// Verification is the status of the aircraft's last ADS-B position
	// claim checked by multilateration (issue 31): verified,
	// contradicted or unverifiable; absent when never checked.
	Verification string `json:"verification,omitempty"`
}

// Identity is what a threat claims to be.
type Identity struct {
	ICAO        string `json:"icao,omitempty"`
	UASID       string `json:"uas_id,omitempty"`
	OperatorID  string `json:"operator_id,omitempty"`
	Callsign    string `json:"callsign,omitempty"`
	Category    string `json:"category,omitempty"`
	AllowListed bool   `json:"allow_listed"`
	Side        string `json:"side,omitempty"`
}

// SensorEvent is published on cuas.sensor.{id} (issue 25) by the instance
// whose input hears the sensor: when its state changes (first heard, a
// position, a status, a new kind of refused message, down or up again),
// at most once a second, and every SensorRepeat. Every instance merges
// what the others publish into its GET /v1/sensors.
type SensorEvent struct {
	Header
	Sensor Sensor `json:"sensor"`
}

// Sensor is one field sensor (a WarDragon kit, an ESP32 scanner, a UDP
// forwarder, a Wi-Fi capture): the object of GET /v1/sensors and of sensor
// events (issue 25).
type Sensor struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Position is nil until configured or reported.
	Position  *SensorPosition `json:"position,omitempty"`
	FirstSeen time.Time       `json:"first_seen,omitzero"`
	LastHeard time.Time       `json:"last_heard,omitzero"`
	// Messages counts the drone claims and statuses accepted; Rejected the
	// messages refused, by reason.
	Messages uint64            `json:"messages"`
	Rejected map[string]uint64 `json:"rejected,omitempty"`
	// Down is true when the sensor has been silent longer than
	// ExpectSeconds (or was never heard).
	Down          bool    `json:"down"`
	ExpectSeconds float64 `json:"expect_seconds"`
	// GPSFix, CPUPercent and TempC come from a WarDragon status.
	GPSFix     *bool    `json:"gps_fix,omitempty"`
	CPUPercent *float64 `json:"cpu_percent,omitempty"`
	TempC      *float64 `json:"temperature_c,omitempty"`
	// LastRSSI is the signal strength of the last drone claim, in dBm.
	LastRSSI *float64 `json:"last_rssi_dbm,omitempty"`
	// Instance is the cuasd instance whose input this state comes from
	// (--instance); HeardBy, on GET /v1/sensors, every instance that has
	// heard the sensor, sorted (several do when a forwarder sends to each,
	// or each subscribes to one kit).
	Instance string   `json:"instance,omitempty"`
	HeardBy  []string `json:"heard_by,omitempty"`
	// Clock and MLAT describe a Mode S receiver taking part in
	// multilateration (issue 31): what its Beast timestamps are (gps or
	// 12mhz) and its clock sync with the other receivers.
	Clock string      `json:"clock,omitempty"`
	MLAT  *SensorMLAT `json:"mlat,omitempty"`
}

// SensorMLAT is a Mode S receiver's part in multilateration.
type SensorMLAT struct {
	// Receptions counts its timestamped Mode S receptions.
	Receptions uint64 `json:"receptions"`
	// SyncPairs is how many other receivers its free-running clock has a
	// pairwise sync with, SyncGood how many of those are usable now; a
	// GPS-timed receiver needs none with another GPS-timed one.
	SyncPairs int `json:"sync_pairs"`
	SyncGood  int `json:"sync_good"`
	// DelayNS is a GPS-timed receiver's timestamp delay relative to the
	// network's other GPS-timed receivers (cable, filters, detection),
	// learnt from ADS-B positions and subtracted from its times; absent
	// until established.
	DelayNS *float64 `json:"delay_ns,omitempty"`
	// PositionMoves counts the times the receiver's reported position
	// (Cuas-Sensor-Position) moved, or its clock changed, and its clock
	// sync and delay calibration restarted.
	PositionMoves uint64 `json:"position_moves"`
}

// SensorPosition is where a sensor is.
type SensorPosition struct {
	Lat    float64 `json:"lat"`
	Lon    float64 `json:"lon"`
	AltM   float64 `json:"alt_m,omitempty"`
	HasAlt bool    `json:"-"`
	// Source is "configured" (from the command line or --config) or
	// "reported" (the sensor's own status feed or a Mode S receiver's
	// Cuas-Sensor-Position header, an unauthenticated claim like any
	// other; a configured position wins over it).
	Source string `json:"source"`
}

// Error is the error type of package events.
type Error struct {
	Subject string
	Err     error
}

func (e *Error) Error() string { return "events: " + e.Subject + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Peek reads the header of an event without decoding the rest, so a
// consumer can dispatch on Type (and refuse a version it does not know).
func Peek(data []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(data, &h); err != nil {
		return h, err
	}
	if h.V != Version {
		return h, fmt.Errorf("event schema version %d, this build reads %d", h.V, Version)
	}
	if h.Type == "" {
		return h, fmt.Errorf("event has no type")
	}
	return h, nil
}
