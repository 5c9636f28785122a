package readsbjson

import (
	"strconv"
	"time"

	"github.com/cuasd/cuasd/events"
)

// counts are the counters of one stats.json period.
type counts struct {
	start     time.Time
	messages  uint64 // observations (decoded messages) of the tracks
	positions uint64 // position updates
	tracks    uint64 // new tracks
}

func (c *counts) add(o *counts) {
	c.messages += o.messages
	c.positions += o.positions
	c.tracks += o.tracks
}

// stats keeps stats.json: the current minute ("latest"), the last 15
// complete minutes (for last1min, last5min, last15min) and the total.
type stats struct {
	start time.Time
	cur   counts
	mins  []counts // complete minutes, newest last, at most 15
	total counts
}

// count adds what an update of a track tells: a new position, and, when
// messages is set, the messages since the last update.
func (s *stats) count(prev, next *events.Track, messages bool) {
	if messages {
		d := next.Observations
		if next.Observations >= prev.Observations {
			d -= prev.Observations
		}
		s.addMessages(d)
	}
	if next.Lat != nil && next.Lon != nil && (prev.Lat == nil || prev.Lon == nil || *prev.Lat != *next.Lat || *prev.Lon != *next.Lon) {
		s.cur.positions++
		s.total.positions++
	}
}

// addMessages counts n messages.
func (s *stats) addMessages(n uint64) {
	s.cur.messages += n
	s.total.messages += n
}

// roll closes the current minute when it is over.
func (s *stats) roll(now time.Time) {
	if s.start.IsZero() {
		s.start, s.cur.start = now, now
	}
	for now.Sub(s.cur.start) >= time.Minute {
		s.total.tracks += s.cur.tracks
		s.mins = append(s.mins, s.cur)
		if len(s.mins) > 15 {
			s.mins = s.mins[1:]
		}
		s.cur = counts{start: s.cur.start.Add(time.Minute)}
	}
}

// json builds stats.json.
func (s *stats) json(now time.Time) []byte {
	b := append([]byte(nil), '{')
	b = appendPeriod(b, "latest", s.cur, now)
	for _, p := range []struct {
		name string
		n    int
	}{{"last1min", 1}, {"last5min", 5}, {"last15min", 15}} {
		var c counts
		k := min(p.n, len(s.mins))
		c.start = s.cur.start.Add(-time.Duration(p.n) * time.Minute)
		for _, m := range s.mins[len(s.mins)-k:] {
			c.add(&m)
		}
		b = append(b, ',')
		b = appendPeriod(b, p.name, c, s.cur.start)
	}
	t := s.total
	t.start = s.start
	t.tracks += s.cur.tracks
	b = append(b, ',')
	b = appendPeriod(b, "total", t, now)
	return append(b, "}\n"...)
}

func appendPeriod(b []byte, name string, c counts, end time.Time) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":{"start":`...)
	b = strconv.AppendFloat(b, float64(c.start.UnixMilli())/1000, 'f', 1, 64)
	b = append(b, `,"end":`...)
	b = strconv.AppendFloat(b, float64(end.UnixMilli())/1000, 'f', 1, 64)
	b = append(b, `,"messages":`...)
	b = strconv.AppendUint(b, c.messages, 10)
	b = append(b, `,"messages_valid":`...)
	b = strconv.AppendUint(b, c.messages, 10)
	b = append(b, `,"position_count_total":`...)
	b = strconv.AppendUint(b, c.positions, 10)
	b = append(b, `,"tracks":{"all":`...)
	b = strconv.AppendUint(b, c.tracks, 10)
	return append(b, "}}"...)
}
