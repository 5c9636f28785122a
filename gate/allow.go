package gate

import (
	"fmt"
	"slices"
	"strings"
)

// Identity holds the identity claims of a track. They are broadcast
// claims, unauthenticated and spoofable: a match on the allow-list lowers
// the identity axis and caps the decision, it never proves authorisation.
type Identity struct {
	// UASID is the Remote ID UAS id (serial number, registration id...).
	UASID string `json:"uas_id,omitempty"`
	// ICAO is the 24-bit ICAO aircraft address as 6 hex digits.
	ICAO string `json:"icao,omitempty"`
	// OperatorID is the Remote ID operator id.
	OperatorID string `json:"operator_id,omitempty"`
}

// claims counts the identity claims present.
func (id Identity) claims() int {
	n := 0
	for _, s := range [...]string{id.UASID, id.ICAO, id.OperatorID} {
		if s != "" {
			n++
		}
	}
	return n
}

// AllowList is the set of authorised identities. A track matches when any
// one of its claims is listed.
type AllowList struct {
	UASIDs      []string `json:"uas_ids" yaml:"uas_ids"`
	ICAO        []string `json:"icao" yaml:"icao"`
	OperatorIDs []string `json:"operator_ids" yaml:"operator_ids"`
}

// MaxAllowEntries bounds the allow-list, over all three lists.
const MaxAllowEntries = 100_000

// Validate checks every entry: non-empty, at most 64 printable ASCII
// characters without spaces, ICAO addresses exactly 6 hex digits. It
// returns an *Error naming each bad entry, or nil.
func (a *AllowList) Validate() error {
	var e Error
	if n := len(a.UASIDs) + len(a.ICAO) + len(a.OperatorIDs); n > MaxAllowEntries {
		e.add("", "", fmt.Sprintf("at most %d entries in all, got %d", MaxAllowEntries, n))
		return &e
	}
	check := func(field string, list []string, icao bool) {
		for i, s := range list {
			f := fmt.Sprintf("%s[%d]", field, i)
			switch {
			case icao && !isICAO(s):
				e.add(f, "", "must be a 24-bit ICAO address as 6 hexadecimal digits")
			case !icao && !isToken(s):
				e.add(f, "", "must be 1 to 64 printable ASCII characters without spaces")
			}
		}
	}
	check("uas_ids", a.UASIDs, false)
	check("icao", a.ICAO, true)
	check("operator_ids", a.OperatorIDs, false)
	return e.orNil()
}

func isICAO(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isToken(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Normalize returns a copy with ICAO addresses in upper case and every list
// sorted and free of duplicates, the canonical form that is stored.
func (a *AllowList) Normalize() AllowList {
	norm := func(in []string, upper bool) []string {
		out := make([]string, 0, len(in))
		for _, s := range in {
			if upper {
				s = strings.ToUpper(s)
			}
			out = append(out, s)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return AllowList{UASIDs: norm(a.UASIDs, false), ICAO: norm(a.ICAO, true), OperatorIDs: norm(a.OperatorIDs, false)}
}

// AllowStatus says whether a track's identity is on the allow-list.
type AllowStatus uint8

// The allow-list statuses. AllowUnknown means the caller did not check.
const (
	AllowUnknown AllowStatus = iota
	AllowNotListed
	AllowListed
)

// String returns "unknown", "not-listed" or "listed".
func (s AllowStatus) String() string {
	switch s {
	case AllowNotListed:
		return "not-listed"
	case AllowListed:
		return "listed"
	}
	return "unknown"
}

// AllowIndex answers allow-list membership in constant time. It is
// immutable once built and safe for concurrent use.
type AllowIndex struct {
	uas, icao, op map[string]struct{}
}

// NewAllowIndex indexes a.
func NewAllowIndex(a AllowList) *AllowIndex {
	set := func(list []string, upper bool) map[string]struct{} {
		m := make(map[string]struct{}, len(list))
		for _, s := range list {
			if upper {
				s = strings.ToUpper(s)
			}
			m[s] = struct{}{}
		}
		return m
	}
	return &AllowIndex{uas: set(a.UASIDs, false), icao: set(a.ICAO, true), op: set(a.OperatorIDs, false)}
}

// Match returns AllowListed and the JSON name of the first matching claim
// ("uas_id", "icao" or "operator_id"), or AllowNotListed and "". UAS and
// operator ids match exactly; ICAO addresses without regard to case. A nil
// index lists nothing. Match does not allocate for upper-case ICAO claims.
func (x *AllowIndex) Match(id Identity) (AllowStatus, string) {
	if x == nil {
		return AllowNotListed, ""
	}
	if _, ok := x.uas[id.UASID]; ok && id.UASID != "" {
		return AllowListed, "uas_id"
	}
	if id.ICAO != "" {
		icao := id.ICAO
		if strings.ContainsAny(icao, "abcdef") {
			icao = strings.ToUpper(icao)
		}
		if _, ok := x.icao[icao]; ok {
			return AllowListed, "icao"
		}
	}
	if _, ok := x.op[id.OperatorID]; ok && id.OperatorID != "" {
		return AllowListed, "operator_id"
	}
	return AllowNotListed, ""
}
