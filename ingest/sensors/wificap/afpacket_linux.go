//go:build linux

package wificap

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cuasd/cuasd/ingest/pcap"
	"github.com/cuasd/cuasd/ingest/sensors"
)

// Linux ARPHRD_* interface types of 802.11 monitor interfaces.
const (
	arphrdIEEE80211         = 801
	arphrdIEEE80211Radiotap = 803
)

// Open opens the --wifi-capture value IFACE[?sensor=NAME&lat=..&lon=..]:
// an AF_PACKET socket bound to the interface, which must be an 802.11
// monitor interface (radiotap or bare 802.11 framing). It needs root or
// CAP_NET_RAW.
func Open(spec string, reg *sensors.Registry, log *slog.Logger) (*Source, error) {
	sp, err := sensors.ParseSpec(spec)
	if err != nil {
		return nil, &Error{Op: "config", Err: err}
	}
	ifi, err := net.InterfaceByName(sp.Addr)
	if err != nil {
		return nil, &Error{Op: "interface " + sp.Addr, Err: err}
	}
	lt, err := linkType(sp.Addr)
	if err != nil {
		return nil, err
	}
	s, err := openOn(ifi, lt, sp, reg, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// linkType maps the interface's ARPHRD type to a pcap link type.
func linkType(iface string) (int, error) {
	b, err := os.ReadFile("/sys/class/net/" + iface + "/type")
	if err != nil {
		return 0, &Error{Op: "interface " + iface, Err: err}
	}
	t, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	switch t {
	case arphrdIEEE80211Radiotap:
		return pcap.LinkTypeRadiotap, nil
	case arphrdIEEE80211:
		return pcap.LinkTypeIEEE80211, nil
	}
	return 0, &Error{Op: "interface " + iface, Err: fmt.Errorf("link type %d is not an 802.11 monitor interface "+
		"(put it in monitor mode: iw dev %s set type monitor)", t, iface)}
}

// openOn binds a packet socket to ifi, reading frames of link type lt.
func openOn(ifi *net.Interface, lt int, sp sensors.Spec, reg *sensors.Registry, log *slog.Logger) (*Source, error) {
	proto := int(htons(unix.ETH_P_ALL))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, proto)
	if err != nil {
		return nil, &Error{Op: "packet socket (needs root or CAP_NET_RAW)", Err: err}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, &Error{Op: "bind " + ifi.Name, Err: err}
	}
	// A non-blocking descriptor in an *os.File joins Go's poller, so Close
	// from another goroutine ends a pending Read.
	s := &Source{Iface: ifi.Name, Sensor: defaultSensor(ifi.Name), LinkType: lt, Registry: reg, Log: log,
		sock: os.NewFile(uintptr(fd), "packet:"+ifi.Name)}
	if sp.Sensor != "" {
		s.Sensor = sp.Sensor
	}
	reg.Configure(s.Sensor, Adapter, sp.Position, sp.Expect)
	return s, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
