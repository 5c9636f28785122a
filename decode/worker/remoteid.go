package worker

import (
	"errors"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/remoteid"
)

// RemoteID decodes Remote ID frames: a bare 25-byte message, a message
// pack, or a carrier frame (Wi-Fi beacon or NAN frame without radiotap,
// BLE advertising data), recognised from the bytes. Messages of one
// transmitter are associated by its address (see remoteid.Associator), so
// a Location heard alone is reported under the UAS id heard before. It is
// not safe for concurrent use.
type RemoteID struct {
	f     remoteid.Frame
	assoc *remoteid.Associator
}

// NewRemoteID returns a Remote ID frame decoder.
func NewRemoteID() *RemoteID { return &RemoteID{assoc: remoteid.NewAssociator(30 * time.Second)} }

// Protocol implements FrameDecoder.
func (*RemoteID) Protocol() decode.Protocol { return decode.RemoteID }

// Decode implements FrameDecoder.
func (d *RemoteID) Decode(frame []byte, meta Meta, out []decode.Observation) ([]decode.Observation, error) {
	c, ok := remoteid.ParseCarrier(meta.Carrier)
	if !ok {
		return out, &decodeError{"carrier", errors.New("unknown carrier " + meta.Carrier)}
	}
	if err := remoteid.DecodeCarrier(c, frame, &d.f); err != nil {
		return out, &decodeError{ridReason(err), err}
	}
	o := d.assoc.Observe(&d.f, meta.RecvUnixNano, meta.Sensor)
	if o.Key == "" {
		// A bare message without a UAS id and no carrier address: nothing
		// ties it to an aircraft yet. Not an error, not a track.
		return out, nil
	}
	return append(out, o), nil
}

// Reasons implements ReasonLister.
func (*RemoteID) Reasons() []string { return []string{"carrier", "not_remote_id", "invalid"} }

func ridReason(err error) string {
	if errors.Is(err, remoteid.ErrNotRemoteID) {
		return "not_remote_id"
	}
	return "invalid"
}
