package cot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Wire formats of a sink.
const (
	// ProtocolXML is CoT XML ("TAK Protocol version 0"), what every TAK
	// client reads.
	ProtocolXML = 0
	// ProtocolV1 is TAK Protocol version 1: a protobuf TakMessage, in the
	// mesh framing (0xbf 0x01 0xbf) on UDP.
	ProtocolV1 = 1
)

// meshHeader starts every TAK Protocol version 1 mesh datagram.
var meshHeader = []byte{0xbf, 0x01, 0xbf}

// protoEvent is what a TakMessage carries of one CoT event.
type protoEvent struct {
	uid, typ, how                 []byte
	send, start, stale            uint64 // Unix ms
	lat, lon, hae, ce, le         float64
	callsign                      []byte
	speed, course                 float64
	hasContact, hasTrack, hasTime bool
	xmlDetail                     []byte
}

// AppendMesh appends the TAK Protocol version 1 mesh datagram of one CoT
// XML event (as Encoder writes it): the header and a TakMessage with the
// event and a TakControl saying cuasd decodes version 1 only (the mesh
// protocol asks every v1 sender to announce it). contact and track become
// their protobuf messages, every other detail element stays XML in
// xmlDetail. The XML is parsed, so any input is safe (FuzzMesh).
func AppendMesh(dst, doc []byte, contactUID string) ([]byte, error) {
	var ev protoEvent
	if err := ev.parse(doc); err != nil {
		return dst, &Error{Flag: "TAK protocol 1", Err: err}
	}
	dst = append(dst, meshHeader...)
	ctl := protowire.AppendTag(nil, 1, protowire.VarintType)
	ctl = protowire.AppendVarint(ctl, 1)
	ctl = protowire.AppendTag(ctl, 2, protowire.VarintType)
	ctl = protowire.AppendVarint(ctl, 1)
	ctl = appendString(ctl, 3, []byte(contactUID))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendBytes(dst, ctl)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	return protowire.AppendBytes(dst, ev.cotEvent()), nil
}

// streamMagic starts every TAK Protocol version 1 stream frame.
const streamMagic = 0xbf

// AppendStream appends the TAK Protocol version 1 stream frame of one CoT
// XML event: 0xbf, the length of the TakMessage as a varint, and the
// TakMessage (the event only: on a stream the version was agreed for the
// whole connection, so no TakControl is sent). The XML is parsed as by
// AppendMesh.
func AppendStream(dst, doc []byte) ([]byte, error) {
	var ev protoEvent
	if err := ev.parse(doc); err != nil {
		return dst, &Error{Flag: "TAK protocol 1", Err: err}
	}
	msg := appendString(nil, 2, ev.cotEvent())
	dst = append(dst, streamMagic)
	dst = protowire.AppendVarint(dst, uint64(len(msg)))
	return append(dst, msg...), nil
}

func appendString(dst []byte, num protowire.Number, s []byte) []byte {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendBytes(dst, s)
}

func appendDouble(dst []byte, num protowire.Number, v float64) []byte {
	dst = protowire.AppendTag(dst, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(dst, math.Float64bits(v))
}

func appendUint(dst []byte, num protowire.Number, v uint64) []byte {
	dst = protowire.AppendTag(dst, num, protowire.VarintType)
	return protowire.AppendVarint(dst, v)
}

// cotEvent encodes the CotEvent message.
func (p *protoEvent) cotEvent() []byte {
	b := appendString(nil, 1, p.typ)
	b = appendString(b, 5, p.uid)
	b = appendUint(b, 6, p.send)
	b = appendUint(b, 7, p.start)
	b = appendUint(b, 8, p.stale)
	b = appendString(b, 9, p.how)
	for i, v := range [...]float64{p.lat, p.lon, p.hae, p.ce, p.le} {
		b = appendDouble(b, protowire.Number(10+i), v)
	}
	d := appendString(nil, 1, p.xmlDetail)
	if p.hasContact {
		d = appendString(d, 2, appendString(nil, 2, p.callsign))
	}
	if p.hasTrack {
		tr := appendDouble(nil, 1, p.speed)
		d = appendString(d, 7, appendDouble(tr, 2, p.course))
	}
	return appendString(b, 15, d)
}

// parse reads the event, point and detail of a CoT XML document.
func (p *protoEvent) parse(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err != nil {
			return errors.New("no <event> element")
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "event" {
				return errors.New("the root is not <event>")
			}
			if err := p.eventAttrs(se.Attr); err != nil {
				return err
			}
			return p.children(d, doc)
		}
	}
}

func (p *protoEvent) eventAttrs(attrs []xml.Attr) error {
	var err error
	for _, a := range attrs {
		switch a.Name.Local {
		case "uid":
			p.uid = []byte(a.Value)
		case "type":
			p.typ = []byte(a.Value)
		case "how":
			p.how = []byte(a.Value)
		case "time":
			p.send, err = unixMs(a.Value, err)
		case "start":
			p.start, err = unixMs(a.Value, err)
		case "stale":
			p.stale, err = unixMs(a.Value, err)
			p.hasTime = true
		}
	}
	if err == nil && (len(p.uid) == 0 || len(p.typ) == 0 || !p.hasTime) {
		err = errors.New("<event> lacks uid, type or stale")
	}
	return err
}

// unixMs parses a CoT time as Unix milliseconds (keeping an earlier error).
func unixMs(s string, prev error) (uint64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if prev != nil {
		return 0, prev
	}
	if err != nil || t.Before(time.Unix(0, 0)) {
		return 0, errors.New("bad time " + strconv.Quote(s))
	}
	return uint64(t.UnixMilli()), nil
}

// children reads <point> and <detail> of the event.
func (p *protoEvent) children(d *xml.Decoder, doc []byte) error {
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return errors.New("unterminated <event>")
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil // </event>
		case xml.StartElement:
			if err := p.child(d, doc, t); err != nil {
				return err
			}
		}
	}
}

func (p *protoEvent) child(d *xml.Decoder, doc []byte, se xml.StartElement) error {
	switch se.Name.Local {
	case "point":
		for _, a := range se.Attr {
			if f := p.pointField(a.Name.Local); f != nil {
				v, err := strconv.ParseFloat(a.Value, 64)
				if err != nil {
					return errors.New("bad point " + a.Name.Local)
				}
				*f = v
			}
		}
		return d.Skip()
	case "detail":
		return p.detail(d, doc)
	}
	return d.Skip()
}

// pointField is the field of a <point> attribute (nil: not one).
func (p *protoEvent) pointField(name string) *float64 {
	switch name {
	case "lat":
		return &p.lat
	case "lon":
		return &p.lon
	case "hae":
		return &p.hae
	case "ce":
		return &p.ce
	case "le":
		return &p.le
	}
	return nil
}

// detail moves contact and track into their messages and keeps every
// other element, byte for byte, as xmlDetail.
func (p *protoEvent) detail(d *xml.Decoder, doc []byte) error {
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil
		case xml.StartElement:
			typed := p.detailElement(t)
			if err := d.Skip(); err != nil {
				return err
			}
			if !typed {
				p.xmlDetail = append(p.xmlDetail, doc[off:d.InputOffset()]...)
			}
		}
	}
}

// detailElement moves <contact callsign> and <track speed course> into
// their typed fields and reports whether it did. As TAK Server does
// (StreamingProtoBufHelper), only an element with exactly those
// attributes is typed: a <track> with a course but no speed stays XML,
// so that its speed reads as unknown, not as 0 m/s.
func (p *protoEvent) detailElement(se xml.StartElement) bool {
	switch se.Name.Local {
	case "contact":
		if len(se.Attr) != 1 || se.Attr[0].Name.Local != "callsign" {
			return false
		}
		p.callsign, p.hasContact = []byte(se.Attr[0].Value), true
		return true
	case "track":
		if len(se.Attr) != 2 {
			return false
		}
		var speed, course float64
		var seen int
		for _, a := range se.Attr {
			v, err := strconv.ParseFloat(a.Value, 64)
			switch {
			case err != nil:
				return false
			case a.Name.Local == "speed":
				speed, seen = v, seen|1
			case a.Name.Local == "course":
				course, seen = v, seen|2
			}
		}
		if seen != 3 {
			return false
		}
		p.speed, p.course, p.hasTrack = speed, course, true
		return true
	}
	return false
}
