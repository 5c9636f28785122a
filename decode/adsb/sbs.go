package adsb

import (
	"bytes"
	"iter"
	"strconv"
	"time"
)

// SBSMessage is one "MSG" line of the SBS-1 / BaseStation CSV format that
// dump1090 serves on port 30003. The format carries values a decoder has
// already derived (often statefully, e.g. positions); they are claims at
// second hand.
type SBSMessage struct {
	// TransmissionType is 1-8: 1 identification, 2 surface position,
	// 3 airborne position, 4 velocity, 5 surveillance altitude,
	// 6 surveillance identity, 7 air-to-air, 8 all-call reply.
	TransmissionType uint8
	Address          uint32
	// Generated is the date and time the message was generated, in the
	// zone of the producer (the format does not say; dump1090 uses UTC).
	HasGenerated bool
	Generated    time.Time

	HasCallsign     bool
	Callsign        Callsign
	HasAltitude     bool
	Altitude        int32 // feet
	HasGroundspeed  bool
	Groundspeed     float64 // knots
	HasTrack        bool
	Track           float64 // degrees
	HasPosition     bool
	Lat, Lon        float64
	HasVerticalRate bool
	VerticalRate    int32 // feet per minute
	HasSquawk       bool
	Squawk          Squawk
	// The flags are present when the producer set them (0 or -1/1).
	HasAlert, Alert         bool
	HasEmergency, Emergency bool
	HasSPI, SPI             bool
	HasOnGround, OnGround   bool
}

// ParseSBS parses one SBS "MSG" line into m. Lines of the other record
// types (SEL, ID, AIR, STA, CLK) and malformed lines give ErrFormat.
func ParseSBS(line []byte, m *SBSMessage) error {
	*m = SBSMessage{}
	var f sbsFields
	if n := f.split(bytes.TrimSpace(line)); n < 11 || string(f.v[0]) != "MSG" {
		return ErrFormat
	}
	if err := f.identity(m); err != nil {
		return err
	}
	if err := f.state(m); err != nil {
		return err
	}
	if f.bad {
		return ErrFormat
	}
	return nil
}

// sbsFields are the comma-separated fields of one SBS line; bad records
// that a number or flag field did not parse.
type sbsFields struct {
	v   [22][]byte
	bad bool
}

// split cuts line at its commas into at most 22 fields and returns how
// many it found (the last holds the rest of the line).
func (f *sbsFields) split(line []byte) int {
	n := 0
	for n < len(f.v) {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			f.v[n] = line
			return n + 1
		}
		f.v[n], line = line[:i], line[i+1:]
		n++
	}
	return n
}

// identity reads the transmission type, the address, the generation time
// and the callsign.
func (f *sbsFields) identity(m *SBSMessage) error {
	tt, err := strconv.ParseUint(string(f.v[1]), 10, 8)
	if err != nil || tt < 1 || tt > 8 {
		return ErrFormat
	}
	m.TransmissionType = uint8(tt)
	addr, ok := hexUint(f.v[4])
	if !ok || len(f.v[4]) != 6 {
		return ErrFormat
	}
	m.Address = uint32(addr)
	if len(f.v[6]) > 0 && len(f.v[7]) > 0 {
		t, err := time.Parse("2006/01/02 15:04:05.999999999", string(f.v[6])+" "+string(f.v[7]))
		if err != nil {
			return ErrFormat
		}
		m.Generated, m.HasGenerated = t, true
	}
	if v := bytes.TrimSpace(f.v[10]); len(v) > 0 {
		if len(v) > 8 {
			return ErrFormat
		}
		m.Callsign = Callsign{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
		copy(m.Callsign[:], v)
		m.HasCallsign = true
	}
	return nil
}

// state reads the altitude, velocity, position, squawk and flags; a
// malformed squawk is an error at once, other bad fields set f.bad.
func (f *sbsFields) state(m *SBSMessage) error {
	if v, ok := f.num(11); ok {
		m.Altitude, m.HasAltitude = int32(v), true
	}
	m.Groundspeed, m.HasGroundspeed = f.num(12)
	m.Track, m.HasTrack = f.num(13)
	lat, ok1 := f.num(14)
	lon, ok2 := f.num(15)
	if ok1 && ok2 {
		m.Lat, m.Lon, m.HasPosition = lat, lon, true
	}
	if v, ok := f.num(16); ok {
		m.VerticalRate, m.HasVerticalRate = int32(v), true
	}
	if v := f.v[17]; len(v) > 0 {
		sq, ok := hexUint(v)
		if !ok || len(v) != 4 || sq&0x8888 != 0 {
			return ErrFormat
		}
		m.Squawk, m.HasSquawk = Squawk(sq), true
	}
	m.HasAlert, m.Alert = f.flag(18)
	m.HasEmergency, m.Emergency = f.flag(19)
	m.HasSPI, m.SPI = f.flag(20)
	m.HasOnGround, m.OnGround = f.flag(21)
	return nil
}

// num is field i as a number; ok is false when it is empty or not a
// number (then f.bad is set).
func (f *sbsFields) num(i int) (float64, bool) {
	b := f.v[i]
	if len(b) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		f.bad = true
		return 0, false
	}
	return v, true
}

// flag is field i as a flag: absent (""), clear ("0") or set ("-1", "1");
// anything else sets f.bad.
func (f *sbsFields) flag(i int) (has, set bool) {
	switch string(f.v[i]) {
	case "":
		return false, false
	case "0":
		return true, false
	case "-1", "1":
		return true, true
	}
	f.bad = true
	return false, false
}

// SBSLines iterates over the MSG lines of SBS text, yielding each message
// with a nil error, or a zero message with ErrFormat for any other line.
// Blank lines are skipped.
func SBSLines(b []byte) iter.Seq2[SBSMessage, error] {
	return parseLines(b, ParseSBS)
}
