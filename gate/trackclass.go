package gate

// TrackClass is what a track is, as the words of an alert, a CoT remark,
// an MQTT state and the board say it, and as alert rules select it
// (issue 33): an ADS-B airliner on its approach is an aircraft, not a
// drone alert. It is not an axis of Λ (AxisClassification scores the
// drone database's side); it decides wording and who is paged.
type TrackClass string

// The track classes.
const (
	// TrackAircraft is a crewed aircraft: an ADS-B transponder that does
	// not declare itself an unmanned aerial vehicle.
	TrackAircraft TrackClass = "aircraft"
	// TrackDrone is an unmanned aircraft: Remote ID, DJI DroneID,
	// MAVLink, or ADS-B emitter category B6.
	TrackDrone TrackClass = "drone"
	// TrackUnknown is a track whose claims say neither, or whose signal
	// integrity is below the policy's min_integrity: its claims may be
	// spoofed, so they do not decide what it is.
	TrackUnknown TrackClass = "unknown"
)

// TrackClasses lists the classes, for messages and documentation.
var TrackClasses = []TrackClass{TrackAircraft, TrackDrone, TrackUnknown}

// ParseTrackClass reads a class's name.
func ParseTrackClass(s string) (TrackClass, bool) {
	for _, c := range TrackClasses {
		if string(c) == s {
			return c, true
		}
	}
	return "", false
}

// Noun is the class as a sentence names it: "aircraft", "drone" or
// "unknown object".
func (c TrackClass) Noun() string {
	switch c {
	case TrackAircraft, TrackDrone:
		return string(c)
	}
	return "unknown object"
}
