package reference

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

var (
	slugRE    = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	mfrRE     = regexp.MustCompile(`^[0-9A-HJ-NP-Z]{4}$`) // CTA-2063-A: digits and capitals but O and I
	emitterRE = regexp.MustCompile(`^[A-D][0-7]$`)
)

// specFields maps the JSON names of Specs to their values, by reflection on
// the struct tags so that a new field cannot escape validation.
func specFields(s *Specs) map[string]*float64 {
	m := map[string]*float64{}
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = v.Field(i).Interface().(*float64)
	}
	return m
}

func bad(d *Drone, field, msg string, args ...any) error {
	return &Error{Field: d.ID + "." + field, Msg: fmt.Sprintf(msg, args...)}
}

// validate checks one record against the schema rules of the database. It
// is run on every load, so a bad data file never reaches a caller.
func validate(d *Drone, iso map[string]string) error {
	if err := validateIdentity(d, iso); err != nil {
		return err
	}
	urls, err := validateNotes(d)
	if err != nil {
		return err
	}
	for _, check := range []func(*Drone, map[string]bool) error{validateSpecs, validateGroups, validateSurfaces, validateClassifier} {
		if err := check(d, urls); err != nil {
			return err
		}
	}
	return nil
}

// validateIdentity checks the id, names, country, side, role and airframe.
func validateIdentity(d *Drone, iso map[string]string) error {
	if !slugRE.MatchString(d.ID) {
		return &Error{Field: "id", Value: d.ID, Msg: "id must be a lower-case slug"}
	}
	if strings.TrimSpace(d.Name) == "" || strings.TrimSpace(d.Manufacturer) == "" {
		return bad(d, "name", "name and manufacturer are required")
	}
	if _, ok := iso[d.Country.Code]; !ok {
		return bad(d, "country.code", "%q is not an ISO 3166-1 alpha-2 code", d.Country.Code)
	}
	if strings.TrimSpace(d.Country.Name) == "" {
		return bad(d, "country.name", "country name is required")
	}
	if !slices.Contains(Sides, d.Side) {
		return bad(d, "side", "unknown side %q", d.Side)
	}
	if !slices.Contains(Roles, d.Role) {
		return bad(d, "role", "unknown role %q", d.Role)
	}
	if !slices.Contains(Airframes, d.Airframe) {
		return bad(d, "airframe", "unknown airframe %q", d.Airframe)
	}
	cuasRole := strings.HasPrefix(d.Role, "c_uas_")
	if (d.Side == SideCounterUAS) != cuasRole {
		return bad(d, "role", "c_uas_ roles belong to exactly the counter-uas side")
	}
	return nil
}

// validateNotes checks the notes and their sources (at least one, each with
// an https URL) and returns the set of source URLs.
func validateNotes(d *Drone) (map[string]bool, error) {
	if len(d.Notes) == 0 {
		return nil, bad(d, "notes", "every record needs at least one sourced note")
	}
	urls := map[string]bool{}
	for i, n := range d.Notes {
		if strings.TrimSpace(n.Text) == "" {
			return nil, bad(d, fmt.Sprintf("notes[%d].text", i), "empty note")
		}
		s := n.Source
		if strings.TrimSpace(s.Title) == "" || strings.TrimSpace(s.Publisher) == "" {
			return nil, bad(d, fmt.Sprintf("notes[%d].source", i), "source needs a title and a publisher")
		}
		u, err := url.Parse(s.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, bad(d, fmt.Sprintf("notes[%d].source.url", i), "source URL must be an absolute https URL, got %q", s.URL)
		}
		urls[s.URL] = true
	}
	return urls, nil
}

// validateSpecs checks that every figure names the note whose source
// states it, and that every source names a figure.
func validateSpecs(d *Drone, urls map[string]bool) error {
	specs := specFields(&d.Specs)
	for name, v := range specs {
		src, has := d.SpecSources[name]
		switch {
		case v != nil && !has:
			return bad(d, "specs."+name, "figure without a source (add it to spec_sources)")
		case v == nil && has:
			return bad(d, "spec_sources."+name, "source given for a null figure")
		case v != nil && !urls[src]:
			return bad(d, "spec_sources."+name, "%q is not the URL of one of the record's notes", src)
		case v != nil && *v <= 0:
			return bad(d, "specs."+name, "figures are positive")
		}
	}
	for name, src := range d.SpecSources {
		if _, isSpec := specs[name]; isSpec {
			continue
		}
		if name != "group" && name != "counters_groups" {
			return bad(d, "spec_sources."+name, "unknown field")
		}
		if !urls[src] {
			return bad(d, "spec_sources."+name, "%q is not the URL of one of the record's notes", src)
		}
	}
	return nil
}

// validateGroups checks the UAS group of an aircraft, or the groups a
// counter-UAS system is built to defeat.
func validateGroups(d *Drone, _ map[string]bool) error {
	if d.Side == SideCounterUAS {
		return validateCountersGroups(d)
	}
	if len(d.CountersGroups) != 0 {
		return bad(d, "counters_groups", "only counter-UAS systems carry counters_groups")
	}
	if d.Group == nil || *d.Group < 1 || *d.Group > 5 || d.GroupBasis == nil {
		return bad(d, "group", "aircraft need a group 1-5 and a group_basis")
	}
	g := *d.Group
	switch *d.GroupBasis {
	case "stated":
		if _, ok := d.SpecSources["group"]; !ok {
			return bad(d, "group", "a stated group needs its source in spec_sources.group")
		}
		if lo, hi := groupBounds(d.Specs); g < lo || g > hi {
			return bad(d, "group", "stated group %d contradicts the specs (rule allows %d-%d)", g, lo, hi)
		}
	case "derived":
		if want := GroupFor(d.Specs); want != g {
			return bad(d, "group", "derived group %d, but the rule gives %d from the specs (0: MTOW unknown)", g, want)
		}
	default:
		return bad(d, "group_basis", "group_basis is \"stated\" or \"derived\"")
	}
	return nil
}

func validateCountersGroups(d *Drone) error {
	if d.Group != nil || d.GroupBasis != nil {
		return bad(d, "group", "counter-UAS systems carry counters_groups, not a group")
	}
	if len(d.CountersGroups) == 0 {
		return bad(d, "counters_groups", "a counter-UAS system names the groups it is built to defeat")
	}
	if _, ok := d.SpecSources["counters_groups"]; !ok {
		return bad(d, "counters_groups", "counters_groups needs a source in spec_sources")
	}
	for i, g := range d.CountersGroups {
		if g < 1 || g > 5 || (i > 0 && g <= d.CountersGroups[i-1]) {
			return bad(d, "counters_groups", "groups are 1-5, ascending, without repeats")
		}
	}
	return nil
}

// validateSurfaces checks the telemetry surfaces. Aircraft always emit
// something a sensor can find; a passive counter-UAS sensor may emit
// nothing at all.
func validateSurfaces(d *Drone, urls map[string]bool) error {
	if len(d.TelemetrySurfaces) == 0 && d.Side != SideCounterUAS {
		return bad(d, "telemetry_surfaces", "at least one surface is required for an aircraft")
	}
	for i, s := range d.TelemetrySurfaces {
		f := fmt.Sprintf("telemetry_surfaces[%d]", i)
		if !slices.Contains(TelemetryKinds, s.Kind) {
			return bad(d, f+".kind", "unknown kind %q", s.Kind)
		}
		if len(s.DetectableBy) == 0 {
			return bad(d, f+".detectable_by", "name at least one means of detection")
		}
		for _, m := range s.DetectableBy {
			if !slices.Contains(DetectionMeans, m) {
				return bad(d, f+".detectable_by", "unknown means %q", m)
			}
		}
		if s.SourceURL != "" && !urls[s.SourceURL] {
			return bad(d, f+".source_url", "%q is not the URL of one of the record's notes", s.SourceURL)
		}
	}
	return nil
}

// validateClassifier checks the facts the classifier matches on.
func validateClassifier(d *Drone, urls map[string]bool) error {
	c := d.Classifier
	for _, p := range c.SerialPrefixes {
		if !mfrRE.MatchString(p) {
			return bad(d, "classifier.serial_prefixes", "%q is not a 4-character CTA-2063-A manufacturer code", p)
		}
	}
	if c.ADSBEmitterCategory != nil && !emitterRE.MatchString(*c.ADSBEmitterCategory) {
		return bad(d, "classifier.adsb_emitter_category", "%q is not an emitter category (A0-D7)", *c.ADSBEmitterCategory)
	}
	if (len(c.SerialPrefixes) > 0 || c.ADSBEmitterCategory != nil) && !urls[c.Source] {
		return bad(d, "classifier.source", "serial prefixes and emitter categories need the URL of a note that states them")
	}
	return nil
}
