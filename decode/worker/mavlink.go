package worker

import (
	"fmt"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/mavlink"
)

// MAVLink decodes a raw MAVLink message body: a chunk of a MAVLink byte
// stream (one UDP datagram, or bytes read from a serial or TCP link)
// holding one or more v1/v2 frames. It is not safe for concurrent use.
type MAVLink struct {
	p mavlink.Parser
	m mavlink.Message
}

// NewMAVLink returns a MAVLink decoder; key, when not nil, is the 32-byte
// signing key used to verify signed frames.
func NewMAVLink(key []byte) (*MAVLink, error) {
	d := &MAVLink{}
	if err := d.p.SetKey(key); err != nil {
		return nil, err
	}
	return d, nil
}

// Protocol implements FrameDecoder.
func (*MAVLink) Protocol() decode.Protocol { return decode.MAVLink }

// Reasons implements ReasonLister.
func (*MAVLink) Reasons() []string { return []string{"no_frame", "crc", "signature", "header"} }

// Decode implements FrameDecoder. A chunk in which no frame verifies is an
// error (a dead letter) that says what was found instead.
func (d *MAVLink) Decode(chunk []byte, meta Meta, out []decode.Observation) ([]decode.Observation, error) {
	d.p.Reset(chunk)
	frames := 0
	for {
		f, ok := d.p.Next()
		if !ok {
			break
		}
		frames++
		if !d.m.Decode(&f) {
			continue
		}
		if o, ok := mavlink.Observe(&f, &d.m, meta.Sensor, meta.RecvUnixNano); ok {
			out = append(out, o)
		}
	}
	if frames == 0 {
		st := d.p.Stats()
		reason := "no_frame"
		switch {
		case st.BadCRC > 0:
			reason = "crc"
		case st.BadSignature > 0:
			reason = "signature"
		case st.HeaderErrors > 0:
			reason = "header"
		}
		return out, &decodeError{reason, fmt.Errorf("mavlink: no valid frame in %d bytes (bad CRC %d, bad signature %d, header errors %d, incomplete at end %v)",
			len(chunk), st.BadCRC, st.BadSignature, st.HeaderErrors, st.IncompleteAtEnd)}
	}
	return out, nil
}
