package fusion

import (
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/reference"
)

// Issue 25 (field sensors): what a track gains from the field sensors'
// observations — the product its broadcast names, matched against the
// drone database, and the last signal level each of its sensors measured.
// It is kept out of line (track.ext, allocated on the first such
// observation) so that the track itself stays in its allocation size
// class (TestTrackFitsItsSizeClass).

// trackExt is the issue-25 part of a track: 136 bytes (its size class 144)
// for a track with signal levels, such as every ADS-B track from a Mode S
// receiver; the rarer product claim is a further pointer.
type trackExt struct {
	product *ProductClaim
	// mlat is issue 31's multilateration state (nil: none).
	mlat *mlatState
	// sig is index-aligned with track.sensors.
	sig [maxSensors]sensorSignal
}

// sensorSignal is one sensor's last signal level.
type sensorSignal struct {
	t    int64   // receive time, Unix ns; 0: none
	v    float32 // dBm, or dBFS when dbfs
	dbfs bool
}

// ProductClaim is what a track's broadcast says it is (an unauthenticated
// claim) and the database record that claim names.
type ProductClaim struct {
	// Text is the free text that may name the product (the Self-ID text,
	// which a DJI DroneID receiver fills with the product name).
	Text string
	// ProductType is DJI DroneID's product type number; 0: none.
	ProductType uint16
	// Match is the drone-database look-up of the claim.
	Match reference.ProductMatch
}

// SensorSignal is the last signal level one sensor measured for a track.
type SensorSignal struct {
	Sensor string
	// Level is RSSI in dBm (field sensors), or dBFS when DBFS (Mode S
	// receivers).
	Level float64
	DBFS  bool
	Time  time.Time
}

// products is the database product claims are matched against: the
// embedded one, loaded once (nil if it failed to load, which its tests
// prevent; then no claim matches).
func products() *reference.DB {
	db, _ := reference.Default()
	return db
}

// mergeSensorClaims records the observation's product claim and its
// sensor's signal level. A repeated claim and a signal update allocate
// nothing; a changed claim is looked up once.
func (t *track) mergeSensorClaims(o *decode.Observation, recv int64) {
	if o.Signal == 0 && o.Description == "" && o.ProductType == 0 {
		return
	}
	if t.ext == nil {
		t.ext = &trackExt{}
	}
	e := t.ext
	if o.Signal != 0 {
		for i, s := range t.sensors {
			if s == o.Sensor {
				e.sig[i] = sensorSignal{t: recv, v: float32(o.Signal), dbfs: o.Protocol == decode.ADSB}
				break
			}
		}
	}
	if o.Description == "" && o.ProductType == 0 {
		return
	}
	if p := e.product; p != nil && o.Description == p.Text && o.ProductType == p.ProductType {
		return
	}
	p := &ProductClaim{Text: o.Description, ProductType: o.ProductType,
		Match: reference.ProductMatch{Claim: o.Description, Method: reference.MatchUnknown}}
	if db := products(); db != nil {
		p.Match = db.MatchProduct(o.Description, int(o.ProductType))
	}
	e.product = p
}

// snapshotSensorClaims copies the issue-25 part into a snapshot.
func (t *track) snapshotSensorClaims(s *Track) {
	if t.ext == nil {
		return
	}
	if t.ext.product != nil {
		p := *t.ext.product
		s.Product = &p
	}
	for i, name := range t.sensors {
		if sig := t.ext.sig[i]; sig.t != 0 {
			s.SensorSignals = append(s.SensorSignals, SensorSignal{Sensor: name, Level: float64(sig.v),
				DBFS: sig.dbfs, Time: time.Unix(0, sig.t).UTC()})
		}
	}
}

// viewSensorClaims fills the issue-25 fields of a track's view.
func (t *Track) viewSensorClaims(j *events.Track) {
	if p := t.Product; p != nil {
		v := &events.Product{Claim: p.Match.Claim, MatchedBy: p.Match.Method,
			ReferenceID: p.Match.ID, ReferenceName: p.Match.Name}
		if p.ProductType != 0 {
			v.ProductType = Ptr(int(p.ProductType))
		}
		if p.Text != p.Match.Claim {
			v.Text = p.Text
		}
		j.Product = v
	}
	for _, s := range t.SensorSignals {
		v := events.SensorSignal{Sensor: s.Sensor, Time: s.Time}
		if s.DBFS {
			v.SignalDBFS = Ptr(Round(s.Level, 1))
		} else {
			v.RSSIDBm = Ptr(Round(s.Level, 1))
		}
		j.SensorSignals = append(j.SensorSignals, v)
	}
}
