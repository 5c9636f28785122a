package pcap

import (
	"errors"

	"github.com/cuasd/cuasd/decode/remoteid"
)

// RemoteIDFrame is one Remote ID carrier frame found in a capture.
type RemoteIDFrame struct {
	Packet Packet
	// Frame is the decoded carrier; meaningful only when Err is nil.
	Frame remoteid.Frame
	// Err is the frame's checksum failure (an *Error) or its Remote ID
	// decoding error (a *remoteid.Error). Nil when the frame decoded.
	Err error
}

// Transport returns the carrier transport of the frame.
func (f *RemoteIDFrame) Transport() remoteid.Transport { return f.Frame.Transport }

// NextRemoteID advances to the next packet that carries Remote ID and
// decodes it into f (reused: no allocation per frame beyond the capture
// reader's own). Packets without a Remote ID carrier are skipped. A frame
// whose FCS/CRC failed is still yielded when its carrier can be recognised,
// with Err set and its payload not to be trusted. Returns io.EOF at the end.
func (r *Reader) NextRemoteID(f *RemoteIDFrame) error {
	for {
		p, err := r.Next()
		if err != nil {
			return err
		}
		var derr error
		switch p.Medium {
		case MediumWiFi:
			derr = remoteid.DecodeWiFi(p.Data, &f.Frame)
		case MediumBLE:
			derr = remoteid.DecodeBLEAdvPDU(p.Data, &f.Frame)
		default:
			continue
		}
		if errors.Is(derr, remoteid.ErrNotRemoteID) {
			continue
		}
		f.Packet = p
		f.Err = derr
		if p.ChecksumKnown && !p.ChecksumOK {
			f.Err = &Error{Frame: p.Number, Reason: "frame checksum (FCS/CRC) failed; payload not decoded"}
		}
		r.Stats.RemoteID++
		return nil
	}
}
