package worker

import (
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/remoteid"
)

// DJI decodes DJI DroneID claims relayed by a field sensor (the AntSDR of
// a WarDragon kit, through package ingest/sensors): the sensor decoded the
// proprietary DroneID broadcast and cuasd receives its result re-encoded
// as an F3411 message pack, which this decoder reads with the Remote ID
// decoder. The observations carry protocol dji (tracks dji:<serial>) and
// position method "dji_droneid", and, like Remote ID ones, are claims:
// neither the broadcast nor the sensor's JSON is authenticated. It is not
// safe for concurrent use.
type DJI struct {
	f     remoteid.Frame
	assoc *remoteid.Associator
}

// NewDJI returns a DJI DroneID claim decoder.
func NewDJI() *DJI { return &DJI{assoc: remoteid.NewAssociator(30 * time.Second)} }

// Protocol implements FrameDecoder.
func (*DJI) Protocol() decode.Protocol { return decode.DJI }

// Decode implements FrameDecoder.
func (d *DJI) Decode(frame []byte, meta Meta, out []decode.Observation) ([]decode.Observation, error) {
	if err := remoteid.DecodeCarrier(remoteid.CarrierPack, frame, &d.f); err != nil {
		return out, &decodeError{ridReason(err), err}
	}
	o := d.assoc.Observe(&d.f, meta.RecvUnixNano, meta.Sensor)
	if o.Key == "" {
		return out, nil
	}
	o.Protocol = decode.DJI
	if o.HasPosition {
		o.PositionMethod = "dji_droneid"
	}
	return append(out, o), nil
}
