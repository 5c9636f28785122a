package cot

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Unknown is the value CoT uses for a hae, ce or le nobody knows.
const Unknown = 9999999.0

// xmlHeader starts every event. The TAK protocol description
// (commoncommo protocol.txt, "Protocol Version 0") asks a stream sender for
// the XML declaration, a newline, then the <event>, and nothing between
// one event's </event> and the next declaration.
const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// timeLayout is the CoT time format: UTC, milliseconds, a literal Z.
const timeLayout = "2006-01-02T15:04:05.000Z"

// appendTime appends t as a CoT timestamp.
func appendTime(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, timeLayout)
}

// appendNum appends v with at most prec decimals (trailing zeros cut, so
// 52.300000 is 52.3), or the CoT unknown value when v is not finite.
func appendNum(dst []byte, v float64, prec int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = Unknown
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', prec, 64)
	if prec == 0 {
		return dst
	}
	for len(dst) > n && dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = append(dst, '0')
	}
	return dst
}

// appendNumAttr appends ` name="v"`.
func appendNumAttr(dst []byte, name string, v float64, prec int) []byte {
	dst = append(dst, ' ')
	dst = append(dst, name...)
	dst = append(dst, '=', '"')
	dst = appendNum(dst, v, prec)
	return append(dst, '"')
}

// appendEscaped appends s as XML character data (or, with attr, as an
// attribute value). Every string in an event is a claim from the air, so
// it is escaped, invalid UTF-8 becomes U+FFFD and characters XML 1.0
// forbids (most control characters) are dropped: a hostile callsign can
// neither break the document nor smuggle markup into a TAK client.
func appendEscaped(dst []byte, s string, attr bool) []byte {
	for i := 0; i < len(s); {
		// Copy the run of bytes that need no escape at once.
		j := i
		for j < len(s) && s[j] < utf8.RuneSelf && asciiEscapes[s[j]] == "" {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendASCII(dst, c, attr)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == 0xFFFE || r == 0xFFFF {
			continue // not XML characters
		}
		dst = utf8.AppendRune(dst, r) // RuneError for invalid bytes: U+FFFD
	}
	return dst
}

// asciiEscapes holds the escape of each ASCII byte that needs one in an
// attribute ("" means the byte is written as is, "-" means dropped).
var asciiEscapes = func() (t [128]string) {
	for c := range 0x20 {
		t[c] = "-"
	}
	t['&'], t['<'], t['>'], t['"'], t['\''] = "&amp;", "&lt;", "&gt;", "&quot;", "&apos;"
	// Attribute values normalise raw whitespace to spaces; references keep it.
	t['\t'], t['\n'], t['\r'] = "&#9;", "&#10;", "&#13;"
	t[0x7f] = "-"
	return t
}()

func appendASCII(dst []byte, c byte, attr bool) []byte {
	e := asciiEscapes[c]
	switch {
	case e == "":
		return append(dst, c)
	case e == "-":
		return dst
	case !attr && (c == '\n' || c == '\t' || c == '"' || c == '\''):
		return append(dst, c) // plain in character data
	}
	return append(dst, e...)
}
