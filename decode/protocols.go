package decode

import "strings"

// ProtocolInfo describes one protocol cuasd takes in. The table below is
// the one place the protocol set is declared: raw subjects, the ingest
// endpoint, the track id prefixes, the API's protocol filters and the
// metrics labels all derive from it. Adding an input protocol starts here
// (and with its frame decoder in decode/worker).
type ProtocolInfo struct {
	// Protocol is the token used in subjects, metrics labels and JSON.
	Protocol Protocol
	// Title is the human name, for help texts and documents.
	Title string
	// TrackPrefix begins the id of a track first heard on the protocol.
	TrackPrefix string
	// MaxFrameBytes bounds one raw frame of the protocol; larger frames are
	// rejected at ingest with a clear error.
	MaxFrameBytes int
}

// protocols is the protocol table, in a fixed order: a protocol's position
// is its Index (fusion keeps per-protocol state in small arrays by it).
var protocols = [...]ProtocolInfo{
	{ADSB, "ADS-B / Mode S (1090ES, Comm-B)", "adsb:", 14},
	{RemoteID, "Remote ID (ASTM F3411)", "rid:", 4096},
	{MAVLink, "MAVLink v1/v2", "mav:", 64 << 10},
	{DJI, "DJI DroneID (decoded by a sensor)", "dji:", 4096},
}

// NumProtocols is the number of protocols in the table.
const NumProtocols = len(protocols)

// Protocols returns the protocol table, in Index order.
func Protocols() []ProtocolInfo { return protocols[:] }

// ProtocolNames returns the protocol tokens, in Index order.
func ProtocolNames() []string {
	out := make([]string, len(protocols))
	for i, p := range protocols {
		out[i] = string(p.Protocol)
	}
	return out
}

// Index is the protocol's position in the table, or -1 for an unknown
// protocol.
func (p Protocol) Index() int {
	for i := range protocols {
		if protocols[i].Protocol == p {
			return i
		}
	}
	return -1
}

// Valid reports whether p is in the protocol table.
func (p Protocol) Valid() bool { return p.Index() >= 0 }

// Info returns p's entry of the table (the zero ProtocolInfo when unknown).
func (p Protocol) Info() ProtocolInfo {
	if i := p.Index(); i >= 0 {
		return protocols[i]
	}
	return ProtocolInfo{}
}

// TrackPrefix is the prefix of the ids of tracks first heard on p
// ("adsb:"); an unknown protocol gets its own name and a colon.
func (p Protocol) TrackPrefix() string {
	if i := p.Index(); i >= 0 {
		return protocols[i].TrackPrefix
	}
	return string(p) + ":"
}

// SplitTrackID splits a track id ("rid:1596F3...") into the protocol whose
// prefix it carries and the key after the prefix. ok is false when the
// prefix names no protocol of the table.
func SplitTrackID(id string) (p Protocol, key string, ok bool) {
	for i := range protocols {
		if rest, found := strings.CutPrefix(id, protocols[i].TrackPrefix); found {
			return protocols[i].Protocol, rest, true
		}
	}
	return "", id, false
}
