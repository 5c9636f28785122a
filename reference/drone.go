package reference

// Side is the allegiance category of a drone record, from the point of view
// of a US/NATO-aligned operator of cuasd.
type Side string

// The four sides of the drone database.
const (
	SideAllied     Side = "allied"
	SideDualUse    Side = "dual-use"
	SideAdversary  Side = "adversary"
	SideCounterUAS Side = "counter-uas"
	// SideUnknown is never stored; Lookup answers it when the candidates
	// do not agree on one side (or there are none).
	SideUnknown Side = "unknown"
)

// Sides lists the stored sides in a stable order.
var Sides = []Side{SideAllied, SideDualUse, SideAdversary, SideCounterUAS}

// Roles lists the allowed values of Drone.Role. The c_uas_ roles belong to
// counter-UAS systems, the others to aircraft.
var Roles = []string{
	"isr",                   // intelligence, surveillance, reconnaissance
	"strike",                // armed, returns to base
	"loitering_munition",    // expendable, man-in-the-loop terminal attack
	"one_way_attack",        // expendable, pre-programmed long-range attack
	"cargo_delivery",        // logistics and parcel delivery
	"agriculture",           // spraying and seeding
	"mapping_survey",        // photogrammetry, survey
	"consumer_camera",       // consumer photography and video
	"enterprise_inspection", // public safety, inspection, industrial
	"c_uas_detection",       // sensors only
	"c_uas_rf_defeat",       // jamming or spoofing the control/navigation links
	"c_uas_cyber_takeover",  // protocol takeover of the control link
	"c_uas_kinetic",         // interceptors, missiles, guns, nets
	"c_uas_directed_energy", // lasers and high-power microwave
	"c_uas_layered",         // integrated detect-and-defeat system
}

// TelemetryKinds lists the allowed values of TelemetrySurface.Kind: the
// emissions by which a system can be detected or identified.
var TelemetryKinds = []string{
	"remote_id",         // ASTM F3411 / ASD-STAN broadcast Remote ID
	"adsb",              // 1090 MHz extended squitter (ADS-B Out)
	"mavlink",           // MAVLink telemetry on the C2 link
	"dji_droneid",       // DJI's proprietary DroneID broadcast
	"ocusync",           // DJI OcuSync / O-series C2 and video link
	"wifi_c2",           // IEEE 802.11 control and video link
	"analog_fpv_5_8ghz", // analogue FPV video in the 5.8 GHz band
	"digital_fpv",       // digital FPV video link
	"los_datalink",      // proprietary line-of-sight C2/video datalink
	"satcom",            // beyond-line-of-sight satellite link
	"cellular",          // C2 or telemetry over a cellular network
	"gnss_only",         // pre-programmed flight, no C2 downlink required
	"radar_emitter",     // the system's own radar (counter-UAS sensors)
	"rf_jammer_emitter", // the system's own jamming emissions
}

// DetectionMeans lists the allowed values of TelemetrySurface.DetectableBy.
var DetectionMeans = []string{
	"rf_detector", "rf_direction_finder", "remote_id_receiver", "adsb_receiver",
	"mavlink_receiver", "droneid_decoder", "radar", "eo_ir", "acoustic", "esm",
}

// Airframes lists the allowed values of Drone.Airframe. The Remote ID UA
// type and the MAVLink MAV_TYPE of a record are derived from it.
var Airframes = []string{
	"fixed_wing", "quadrotor", "hexarotor", "octorotor", "coaxial", "helicopter",
	"vtol_fixedrotor", "vtol_tailsitter", "vtol_tiltrotor", "ground_system",
}

// Country is a state named by its ISO 3166-1 alpha-2 code.
type Country struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// Source is a public document that states a fact in the database.
type Source struct {
	Title     string `json:"title"`
	URL       string `json:"url"`
	Publisher string `json:"publisher"`
}

// Note is one sourced statement about a system.
type Note struct {
	Text   string `json:"text"`
	Source Source `json:"source"`
}

// Specs are the published figures of a system. A nil field means that no
// source consulted states the figure: it is unknown here, not zero, and is
// never estimated. For aircraft the figures are maxima as published (MTOW,
// maximum endurance, range, maximum speed, service ceiling); for counter-UAS
// systems the detection and defeat ranges are the published maxima.
type Specs struct {
	MTOWKg           *float64 `json:"mtow_kg"`
	PayloadKg        *float64 `json:"payload_kg"`
	EnduranceMin     *float64 `json:"endurance_min"`
	RangeKm          *float64 `json:"range_km"`
	MaxSpeedKmh      *float64 `json:"max_speed_kmh"`
	CruiseSpeedKmh   *float64 `json:"cruise_speed_kmh"`
	CeilingM         *float64 `json:"ceiling_m"`
	OperatingAltM    *float64 `json:"operating_altitude_m"`
	WingspanM        *float64 `json:"wingspan_m"`
	DetectionRangeKm *float64 `json:"detection_range_km"`
	DefeatRangeKm    *float64 `json:"defeat_range_km"`
}

// TelemetrySurface is one emission of a system that a sensor can detect.
type TelemetrySurface struct {
	Kind string `json:"kind"`
	// Band is the radio band as published, or nil when no source states it.
	Band         *string  `json:"band"`
	Notes        string   `json:"notes"`
	DetectableBy []string `json:"detectable_by"`
	// SourceURL, when set, is the URL of one of the record's notes that
	// states this surface.
	SourceURL string `json:"source_url,omitempty"`
}

// Classifier holds what a classifier needs to match a broadcast claim to
// this record. RemoteIDUAType and MAVType are derived from the airframe
// (they are what a conforming transmitter on this airframe sends), the
// others are published facts with a source among the record's notes.
type Classifier struct {
	// RemoteIDUAType is the ASTM F3411 UA type (1 aeroplane, 2 helicopter
	// or multirotor, 4 hybrid lift); nil for ground systems.
	RemoteIDUAType *int `json:"remote_id_ua_type"`
	// MAVType and MAVTypeName are the MAVLink MAV_TYPE a flight controller
	// on this airframe reports in HEARTBEAT; nil for ground systems. They do
	// not say that the system speaks MAVLink (see TelemetrySurfaces).
	MAVType     *int   `json:"mavlink_type"`
	MAVTypeName string `json:"mavlink_type_name,omitempty"`
	// ADSBEmitterCategory is the DO-260B emitter category ("B6" unmanned
	// aerial vehicle) for systems published to carry ADS-B Out; else nil.
	ADSBEmitterCategory *string `json:"adsb_emitter_category"`
	// SerialPrefixes are ANSI/CTA-2063-A manufacturer codes (the first four
	// characters of the serial number) published for the manufacturer.
	SerialPrefixes []string `json:"serial_prefixes"`
	// Source is the URL of the note stating the serial prefix or emitter
	// category, when either is set.
	Source string `json:"source,omitempty"`
}

// Drone is one record of the drone database.
type Drone struct {
	// ID is a stable, URL-safe slug: lower-case letters, digits and '-'.
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Manufacturer string  `json:"manufacturer"`
	Country      Country `json:"country"`
	Side         Side    `json:"side"`
	// Group is the US DoD UAS group (1-5); nil for counter-UAS systems.
	Group *int `json:"group"`
	// GroupBasis says where Group comes from: "stated" (a source assigns
	// it) or "derived" (computed here from sourced specs by GroupFor).
	GroupBasis *string `json:"group_basis"`
	// CountersGroups are the UAS groups a counter-UAS system is built to
	// defeat; empty for aircraft.
	CountersGroups []int  `json:"counters_groups"`
	Role           string `json:"role"`
	Airframe       string `json:"airframe"`
	Specs          Specs  `json:"specs"`
	// SpecSources maps each non-null spec field (by its JSON name) and
	// "group" (when stated) or "counters_groups" to the URL of the note
	// whose source states it.
	SpecSources       map[string]string  `json:"spec_sources"`
	TelemetrySurfaces []TelemetrySurface `json:"telemetry_surfaces"`
	Classifier        Classifier         `json:"classifier"`
	Notes             []Note             `json:"notes"`
}
