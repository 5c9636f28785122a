package cot

import (
	"bytes"
	"sync"
	"time"
)

// maxPicture bounds the events a stream sink remembers (about 1.5 KB
// each): a picture larger than this is not replayed whole on reconnect.
const maxPicture = 20000

// picture remembers the newest event of every uid and when it goes stale,
// so that a stream that (re)connects — a TAK Server that restarted — gets
// the current picture at once instead of waiting up to a minute for the
// next zone announcement and 15 s for the next keep-alive.
type picture struct {
	mu   sync.Mutex
	docs map[string]remembered
}

type remembered struct {
	doc   []byte // never modified after it is stored
	stale time.Time
}

// remember stores doc (which must not be modified afterwards) under its
// uid. A lost track or deleted zone replaces the live event, so it is not
// replayed.
func (p *picture) remember(doc []byte, stale time.Time) {
	uid := docUID(doc)
	if uid == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.docs == nil {
		p.docs = map[string]remembered{}
	}
	if _, ok := p.docs[uid]; !ok && len(p.docs) >= maxPicture {
		p.pruneLocked(time.Now())
		if len(p.docs) >= maxPicture {
			return
		}
	}
	p.docs[uid] = remembered{doc: doc, stale: stale}
}

// current returns the events not yet stale at now (and forgets the rest).
func (p *picture) current(now time.Time) [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pruneLocked(now)
	out := make([][]byte, 0, len(p.docs))
	for _, r := range p.docs {
		out = append(out, r.doc)
	}
	return out
}

func (p *picture) pruneLocked(now time.Time) {
	for uid, r := range p.docs {
		if !r.stale.After(now) {
			delete(p.docs, uid)
		}
	}
}

// docUID is the uid attribute of an encoded event ("" if none). The uid
// of a delete event is that of the drawing it deletes, so the deletion
// replaces the drawing in the picture.
func docUID(doc []byte) string {
	attr := []byte(` uid="`)
	// Look at the <event> start tag only: remarks may quote anything.
	start := bytes.Index(doc, []byte("<event "))
	end := bytes.IndexByte(doc[max(start, 0):], '>')
	if start < 0 || end < 0 {
		return ""
	}
	if bytes.Contains(doc[start:start+end], []byte(` type="t-x-d-d"`)) {
		// The deleted drawing's uid is in the link.
		attr = []byte(`<link uid="`)
	}
	i := bytes.Index(doc, attr)
	if i < 0 {
		return ""
	}
	rest := doc[i+len(attr):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
