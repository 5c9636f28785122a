package reference

import "testing"

// TestMatchProduct: product claims as the feeds send them, matched or
// refused; an unknown product is unknown, never the nearest record.
func TestMatchProduct(t *testing.T) {
	db := mustDB(t)
	for _, tc := range []struct {
		name     string
		text     string
		code     int
		id       string
		method   string
		claimTxt string
	}{
		{"AntSDR text", "DJI Mavic 3", 0, "dji-mavic-3", MatchModelName, "DJI Mavic 3"},
		{"bare name", "Mavic 3", 0, "dji-mavic-3", MatchModelName, "Mavic 3"},
		{"case and spacing", "  dji   MAVIC-3 ", 0, "dji-mavic-3", MatchModelName, "dji   MAVIC-3"},
		{"longer name is another record", "DJI Mavic 3 Classic", 0, "dji-mavic-3-classic", MatchModelName, "DJI Mavic 3 Classic"},
		{"Mavic 3 Pro is not in the database", "DJI Mavic 3 Pro", 0, "", MatchUnknown, "DJI Mavic 3 Pro"},
		{"alias", "M30T", 0, "dji-matrice-30", MatchAlias, "M30T"},
		{"alias with manufacturer", "DJI Matrice 30", 0, "dji-matrice-30", MatchAlias, "DJI Matrice 30"},
		{"record name", "Matrice 30 Series", 0, "dji-matrice-30", MatchModelName, "Matrice 30 Series"},
		{"other manufacturer", "Parrot ANAFI", 0, "parrot-anafi", MatchModelName, "Parrot ANAFI"},
		{"short name needs its manufacturer", "X2", 0, "", MatchUnknown, "X2"},
		{"short name with manufacturer", "Skydio X2", 0, "skydio-x2", MatchModelName, "Skydio X2"},
		{"ground system is not a product", "AeroScope", 0, "", MatchUnknown, "AeroScope"},
		{"free text", "Survey flight for roof inspection", 0, "", MatchUnknown, "Survey flight for roof inspection"},
		{"substring is no match", "Mavic", 0, "", MatchUnknown, "Mavic"},
		{"empty", "", 0, "", MatchUnknown, ""},
		{"code 68", "", 68, "dji-mavic-3", MatchProductType, "DJI Mavic 3"},
		{"code 67", "", 67, "dji-matrice-30", MatchProductType, "M30"},
		{"code decides over text", "DJI Mavic 3", 63, "", MatchUnknown, "Mini 2"},
		{"code in table, not in database", "", 16, "", MatchUnknown, "Mavic Pro"},
		{"code not in table", "", 86, "", MatchUnknown, "DJI product type 86"},
		{"code not in table, text decides", "Mavic 3 Classic", 86, "dji-mavic-3-classic", MatchModelName, "Mavic 3 Classic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := db.MatchProduct(tc.text, tc.code)
			if m.ID != tc.id || m.Method != tc.method || m.Claim != tc.claimTxt {
				t.Fatalf("MatchProduct(%q, %d) = %+v, want id %q method %q claim %q", tc.text, tc.code, m, tc.id, tc.method, tc.claimTxt)
			}
			if m.ID != "" {
				if d, _ := db.Drone(m.ID); d.Name != m.Name {
					t.Errorf("name %q, the record's is %q", m.Name, d.Name)
				}
			}
		})
	}
}

// TestLookupByProduct: a matched product narrows the candidates to its
// record, and contradicts a serial of another manufacturer.
func TestLookupByProduct(t *testing.T) {
	db := mustDB(t)
	q := NewQuery()
	q.SerialNumber, q.ProductID = "1581F000000000000", "dji-mavic-3"
	m := db.Lookup(q)
	if got := db.Candidates(m); len(got) != 1 || got[0].ID != "dji-mavic-3" || m.Side != SideDualUse {
		t.Fatalf("DJI serial + Mavic 3: %d candidates, side %s", len(got), m.Side)
	}
	q.SerialNumber = "1596X" // another manufacturer's code
	if m := db.Lookup(q); m.Candidates.Len() != 0 || m.Side != SideUnknown {
		t.Fatalf("contradicting serial: %d candidates, side %s", m.Candidates.Len(), m.Side)
	}
	q = NewQuery()
	q.ProductID = "no-such-record"
	if m := db.Lookup(q); m.Candidates.Len() != 0 || m.Matched != 1 {
		t.Fatalf("unknown product id: %+v", m)
	}
	q.ProductID = "dji-mavic-3"
	if n := testing.AllocsPerRun(100, func() { _ = db.Lookup(q) }); n != 0 {
		t.Errorf("Lookup with a product allocates %v times", n)
	}
}

// TestProductTableMatches guards the code table against a typo that
// would send two numbers to one record by accident.
func TestProductTableMatches(t *testing.T) {
	db := mustDB(t)
	matched := map[string]int{}
	for code := range djiProductTypes {
		if m := db.MatchProduct("", code); m.ID != "" {
			matched[m.ID]++
		}
	}
	if matched["dji-mavic-3"] != 1 || matched["dji-matrice-30"] != 1 || len(matched) != 2 {
		t.Fatalf("code table matches %v, want Mavic 3 and Matrice 30 once each", matched)
	}
}

func BenchmarkMatchProduct(b *testing.B) {
	db := mustDB(b)
	for b.Loop() {
		_ = db.MatchProduct("DJI Mavic 3", 0)
	}
}

// FuzzMatchProduct: any text and number give a known method, and a match
// names a record that exists, is an aircraft, and carries its own name.
func FuzzMatchProduct(f *testing.F) {
	for _, s := range []string{"DJI Mavic 3", "M30T", "Skydio X2", "", "AeroScope", "\xff\x00mavic-3"} {
		f.Add(s, 0)
	}
	f.Add("", 68)
	f.Add("DJI Mavic 3", 63)
	db := mustDB(f)
	f.Fuzz(func(t *testing.T, text string, code int) {
		m := db.MatchProduct(text, code)
		switch m.Method {
		case MatchUnknown:
			if m.ID != "" || m.Name != "" {
				t.Fatalf("unknown with a record: %+v", m)
			}
		case MatchModelName, MatchAlias, MatchProductType:
			d, ok := db.Drone(m.ID)
			if !ok || d.Name != m.Name || d.Airframe == "ground_system" {
				t.Fatalf("match %+v names no aircraft record", m)
			}
		default:
			t.Fatalf("method %q", m.Method)
		}
	})
}
