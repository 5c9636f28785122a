package cot

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"net"
	"os"
	"time"
)

// TAK Protocol version 1 on a TAK Server stream (--tak-server URL
// ?protocol=1). A stream starts in XML; the server offers the versions it
// speaks with a t-x-takp-v event, the client asks for one with
// t-x-takp-q (reusing the offer's uid) and sends nothing else until the
// server answers with t-x-takp-r; an accepted request switches both
// directions to stream frames (0xbf, varint length, TakMessage) from the
// next byte on. A server that offers nothing, or not version 1, or refuses,
// keeps XML — which every TAK Server and client reads.

// negotiationWaits bound the two waits of the negotiation.
type negotiationWaits struct {
	// offer: TAK Server sends its offer as soon as a client connects; a
	// server silent for this long offers nothing, and gets XML.
	offer time.Duration
	// response: the protocol asks a client to wait at least a minute for
	// the answer; without one it hangs up and dials again.
	response time.Duration
}

var defaultWaits = negotiationWaits{offer: 10 * time.Second, response: time.Minute}

// maxControlEvent bounds one XML event read while negotiating.
const maxControlEvent = 1 << 20

// controlEvent is what the negotiation reads of the server's XML events.
type controlEvent struct {
	UID    string `xml:"uid,attr"`
	Type   string `xml:"type,attr"`
	Detail struct {
		TakControl struct {
			Support []struct {
				Version int `xml:"version,attr"`
			} `xml:"TakProtocolSupport"`
			Response []struct {
				Status string `xml:"status,attr"`
			} `xml:"TakResponse"`
		} `xml:"TakControl"`
	} `xml:"detail"`
}

func (e *controlEvent) offers(v int) bool {
	for _, s := range e.Detail.TakControl.Support {
		if s.Version == v {
			return true
		}
	}
	return false
}

func (e *controlEvent) accepted() bool {
	r := e.Detail.TakControl.Response
	return len(r) > 0 && r[0].Status == "true"
}

// negotiate runs the client's side of the negotiation on a fresh stream
// whose incoming bytes r reads. It reports whether version 1 was agreed;
// an error (no answer to the request, a closed connection) means the
// stream cannot be used.
func negotiate(c net.Conn, r *bufio.Reader, w negotiationWaits) (bool, error) {
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	_ = c.SetReadDeadline(time.Now().Add(w.offer))
	offer, err := awaitControl(r, "t-x-takp-v")
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false, nil // no offer: XML
	case err != nil:
		return false, err
	case !offer.offers(ProtocolV1):
		return false, nil
	}
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.Write(appendTakRequest(nil, offer.UID, time.Now())); err != nil {
		return false, err
	}
	_ = c.SetReadDeadline(time.Now().Add(w.response))
	resp, err := awaitControl(r, "t-x-takp-r")
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false, errors.New("the TAK Server did not answer the request for TAK Protocol version 1")
	}
	if err != nil {
		return false, err
	}
	return resp.accepted(), nil
}

// awaitControl reads the server's XML events until one of type typ; the
// others (other clients' events, pings) are passed over.
func awaitControl(r *bufio.Reader, typ string) (*controlEvent, error) {
	for {
		doc, err := readXMLEvent(r)
		if err != nil {
			return nil, err
		}
		var ev controlEvent
		if xml.Unmarshal(doc, &ev) == nil && ev.Type == typ {
			return &ev, nil
		}
	}
}

// readXMLEvent reads up to and including the next "</event>".
func readXMLEvent(r *bufio.Reader) ([]byte, error) {
	var doc []byte
	for {
		chunk, err := r.ReadSlice('>')
		doc = append(doc, chunk...)
		if len(doc) > maxControlEvent {
			return nil, errors.New("an event from the TAK Server exceeds 1 MiB")
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if bytes.HasSuffix(doc, []byte("</event>")) {
			return doc, nil
		}
	}
}

// appendTakRequest appends the t-x-takp-q event asking for version 1 under
// the uid of the server's offer.
func appendTakRequest(dst []byte, protoUID string, now time.Time) []byte {
	dst = append(dst, xmlHeader+`<event version="2.0" uid="`...)
	dst = appendEscaped(dst, protoUID, true)
	dst = append(dst, `" type="t-x-takp-q" how="m-g"`...)
	dst = appendTimes(dst, now, false, time.Minute)
	return append(dst, `><point lat="0.0" lon="0.0" hae="0.0" ce="9999999.0" le="9999999.0"/><detail><TakControl><TakRequest version="1"/></TakControl></detail></event>`...)
}
