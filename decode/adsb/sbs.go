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
	line = bytes.TrimSpace(line)
	var f [22][]byte
	n := 0
	for n < len(f) {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			f[n] = line
			n++
			break
		}
		f[n], line = line[:i], line[i+1:]
		n++
	}
	if n < 11 || string(f[0]) != "MSG" {
		return ErrFormat
	}
	tt, err := strconv.ParseUint(string(f[1]), 10, 8)
	if err != nil || tt < 1 || tt > 8 {
		return ErrFormat
	}
	m.TransmissionType = uint8(tt)
	addr, ok := hexUint(f[4])
	if !ok || len(f[4]) != 6 {
		return ErrFormat
	}
	m.Address = uint32(addr)
	if len(f[6]) > 0 && len(f[7]) > 0 {
		t, err := time.Parse("2006/01/02 15:04:05.999999999", string(f[6])+" "+string(f[7]))
		if err != nil {
			return ErrFormat
		}
		m.Generated, m.HasGenerated = t, true
	}
	if v := bytes.TrimSpace(f[10]); len(v) > 0 {
		if len(v) > 8 {
			return ErrFormat
		}
		m.Callsign = Callsign{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}
		copy(m.Callsign[:], v)
		m.HasCallsign = true
	}
	var errs bool
	num := func(b []byte) (float64, bool) {
		if len(b) == 0 {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			errs = true
			return 0, false
		}
		return v, true
	}
	flag := func(b []byte) (has, set bool) {
		switch string(b) {
		case "":
			return false, false
		case "0":
			return true, false
		case "-1", "1":
			return true, true
		}
		errs = true
		return false, false
	}
	if v, ok := num(f[11]); ok {
		m.Altitude, m.HasAltitude = int32(v), true
	}
	m.Groundspeed, m.HasGroundspeed = num(f[12])
	m.Track, m.HasTrack = num(f[13])
	lat, ok1 := num(f[14])
	lon, ok2 := num(f[15])
	if ok1 && ok2 {
		m.Lat, m.Lon, m.HasPosition = lat, lon, true
	}
	if v, ok := num(f[16]); ok {
		m.VerticalRate, m.HasVerticalRate = int32(v), true
	}
	if v := f[17]; len(v) > 0 {
		sq, ok := hexUint(v)
		if !ok || len(v) != 4 || sq&0x8888 != 0 {
			return ErrFormat
		}
		m.Squawk, m.HasSquawk = Squawk(sq), true
	}
	m.HasAlert, m.Alert = flag(f[18])
	m.HasEmergency, m.Emergency = flag(f[19])
	m.HasSPI, m.SPI = flag(f[20])
	m.HasOnGround, m.OnGround = flag(f[21])
	if errs {
		return ErrFormat
	}
	return nil
}

// SBSLines iterates over the MSG lines of SBS text, yielding each message
// with a nil error, or a zero message with ErrFormat for any other line.
// Blank lines are skipped.
func SBSLines(b []byte) iter.Seq2[SBSMessage, error] {
	return parseLines(b, ParseSBS)
}
