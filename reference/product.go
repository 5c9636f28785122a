package reference

import (
	"strconv"
	"strings"
)

// Product claims (issue 25). A DJI DroneID broadcast names the aircraft's
// product by a type number, which the AntSDR receiver and DragonSync turn
// into a name ("DJI Mavic 3") and relay as the Basic ID description and
// the Self-ID text; a Remote ID Self-ID text may name a product too. Like
// every broadcast field it is an unauthenticated claim: MatchProduct says
// which database record the claim names, never that the aircraft is one.

// How a product claim was matched to a record (ProductMatch.Method).
const (
	// MatchProductType: the DJI DroneID product type number, through the
	// code table.
	MatchProductType = "dji_product_type"
	// MatchModelName: the text is the record's name, optionally preceded
	// by its manufacturer ("DJI Mavic 3").
	MatchModelName = "model_name"
	// MatchAlias: the text is another published name of the record ("M30T"
	// for the Matrice 30 Series).
	MatchAlias = "alias"
	// MatchUnknown: the claim names no record of the database (or the
	// product type number is not in the code table). Nothing is guessed.
	MatchUnknown = "unknown"
)

// djiProductTypes is DJI DroneID's product type number → product name, as
// decoded by the NDSS 2023 DroneID receiver (RUB-SysSec/DroneSecurity,
// src/droneid_packet.py, DRONEID_DRONE_TYPES, which stops at 70). Later
// numbers are left out on purpose: the public tables that list them
// disagree with each other (one gives 86 to the Mavic 3 Classic, another 79),
// so a number above 70 is "unknown", never a guess.
var djiProductTypes = map[int]string{
	1: "Inspire 1", 2: "Phantom 3 Series", 3: "Phantom 3 Series", 4: "Phantom 3 Std", 5: "M100",
	6: "ACEONE", 7: "WKM", 8: "NAZA", 9: "A2", 10: "A3", 11: "Phantom 4", 12: "MG1", 14: "M600",
	15: "Phantom 3 4k", 16: "Mavic Pro", 17: "Inspire 2", 18: "Phantom 4 Pro", 20: "N2", 21: "Spark",
	23: "M600 Pro", 24: "Mavic Air", 25: "M200", 26: "Phantom 4 Series", 27: "Phantom 4 Adv", 28: "M210",
	30: "M210RTK", 31: "A3_AG", 32: "MG2", 34: "MG1A", 35: "Phantom 4 RTK", 36: "Phantom 4 Pro V2.0",
	38: "MG1P", 40: "MG1P-RTK", 41: "Mavic 2", 44: "M200 V2 Series", 51: "Mavic 2 Enterprise",
	53: "Mavic Mini", 58: "Mavic Air 2", 59: "P4M", 60: "M300 RTK", 61: "DJI FPV", 63: "Mini 2",
	64: "AGRAS T10", 65: "AGRAS T30", 66: "Air 2S", 67: "M30", 68: "DJI Mavic 3",
	69: "Mavic 2 Enterprise Advanced", 70: "Mini SE",
}

// DJIProductTypeSource is where the product type table comes from.
const DJIProductTypeSource = "https://github.com/RUB-SysSec/DroneSecurity/blob/main/src/droneid_packet.py"

// productAliases maps other published names of a record (normalised, see
// normProduct) to its id. Spelling variants (case, spaces, hyphens, a
// leading manufacturer name) need no entry: normalisation covers them.
var productAliases = map[string]string{
	// DJI sells the Matrice 30 Series as the M30 and the M30T; DroneID
	// product type 67 is "M30".
	"m30": "dji-matrice-30", "m30t": "dji-matrice-30", "matrice30": "dji-matrice-30",
	"matrice30t": "dji-matrice-30",
}

// ProductMatch is what MatchProduct found for a product claim.
type ProductMatch struct {
	// Claim is the product the broadcast names: the text, or for a product
	// type number the code table's name ("" for a number not in the table).
	Claim string
	// ID and Name are the matched record's; empty when Method is
	// MatchUnknown.
	ID, Name string
	// Method says how the claim was matched (MatchProductType,
	// MatchModelName, MatchAlias, MatchUnknown).
	Method string
}

// DJIProductName returns the code table's name of a DJI DroneID product
// type number.
func DJIProductName(productType int) (string, bool) {
	n, ok := djiProductTypes[productType]
	return n, ok
}

// MatchProduct looks up a product claim: a DJI DroneID product type number
// (0: none) and a text naming the product ("DJI Mavic 3", a Self-ID text;
// "": none). A number in the code table decides (the text, derived from it
// by the receiver, cannot overrule it); otherwise the text must be a
// record's name, with or without its manufacturer, or one of its aliases,
// compared without case, spaces or punctuation. Only aircraft records
// match; a name of three characters or fewer ("X2") must come with its
// manufacturer, since free text would otherwise match it by accident.
// Anything else is MatchUnknown.
func (db *DB) MatchProduct(text string, productType int) ProductMatch {
	if productType > 0 {
		if name, ok := djiProductTypes[productType]; ok {
			m := db.matchText(name)
			m.Claim = name
			if m.Method != MatchUnknown {
				m.Method = MatchProductType
			}
			return m
		}
		if strings.TrimSpace(text) == "" {
			return ProductMatch{Claim: "DJI product type " + strconv.Itoa(productType), Method: MatchUnknown}
		}
	}
	m := db.matchText(text)
	m.Claim = strings.TrimSpace(text)
	return m
}

// matchText matches a product name against the index built by
// indexProducts: one normalisation and one map look-up.
func (db *DB) matchText(text string) ProductMatch {
	if m, ok := db.products[normProduct(text)]; ok {
		return m
	}
	return ProductMatch{Method: MatchUnknown}
}

// indexProducts builds the product index of the aircraft records: each
// record's name with its manufacturer (whole or first word) and, when
// longer than three characters, alone; then the aliases, alone and after
// "dji". A name keeps the first record that claims it.
func (db *DB) indexProducts() {
	db.products = map[string]ProductMatch{}
	add := func(key string, d *Drone, method string) {
		if _, taken := db.products[key]; !taken && key != "" {
			db.products[key] = ProductMatch{ID: d.ID, Name: d.Name, Method: method}
		}
	}
	for i := range db.drones {
		d := &db.drones[i]
		if d.Airframe == "ground_system" {
			continue
		}
		name := normProduct(d.Name)
		add(normProduct(d.Manufacturer)+name, d, MatchModelName)
		add(normProduct(firstWord(d.Manufacturer))+name, d, MatchModelName)
		if len(name) > 3 {
			add(name, d, MatchModelName)
		}
	}
	for alias, id := range productAliases {
		if i, ok := db.byID[id]; ok {
			add(alias, &db.drones[i], MatchAlias)
			add("dji"+alias, &db.drones[i], MatchAlias)
		}
	}
}

// firstWord is the first word of a manufacturer ("Insitu" of "Insitu
// (Boeing)"), how a Self-ID text would name it.
func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}

// normProduct lower-cases s and keeps only its letters and digits, so
// "DJI Mavic-3", "dji mavic 3" and "DJIMavic3" compare equal.
func normProduct(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
