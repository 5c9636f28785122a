package gate

import (
	"slices"
	"testing"
)

func TestAllowList(t *testing.T) {
	a := AllowList{UASIDs: []string{"1581F5FJD239C00DW22E", "1581F5FJD239C00DW22E"}, ICAO: []string{"4ca2d1", "406B90"}, OperatorIDs: []string{"FIN87astrdge12k8"}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	n := a.Normalize()
	if !slices.Equal(n.ICAO, []string{"406B90", "4CA2D1"}) || len(n.UASIDs) != 1 {
		t.Errorf("normalised %+v", n)
	}
	x := NewAllowIndex(a)
	tests := []struct {
		id    Identity
		want  AllowStatus
		field string
	}{
		{Identity{ICAO: "4CA2D1"}, AllowListed, "icao"},
		{Identity{ICAO: "4ca2d1"}, AllowListed, "icao"},
		{Identity{UASID: "1581F5FJD239C00DW22E"}, AllowListed, "uas_id"},
		{Identity{UASID: "1581f5fjd239c00dw22e"}, AllowNotListed, ""}, // UAS ids match exactly
		{Identity{OperatorID: "FIN87astrdge12k8"}, AllowListed, "operator_id"},
		{Identity{ICAO: "ABCDEF", OperatorID: "FIN87astrdge12k8"}, AllowListed, "operator_id"},
		{Identity{}, AllowNotListed, ""},
		{Identity{ICAO: "000000"}, AllowNotListed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			st, f := x.Match(tc.id)
			if st != tc.want || f != tc.field {
				t.Errorf("Match(%+v) = %v %q, want %v %q", tc.id, st, f, tc.want, tc.field)
			}
		})
	}
	if st, _ := (*AllowIndex)(nil).Match(Identity{ICAO: "4CA2D1"}); st != AllowNotListed {
		t.Error("nil index lists something")
	}
	id := Identity{ICAO: "4CA2D1"}
	if n := testing.AllocsPerRun(100, func() { x.Match(id) }); n != 0 {
		t.Errorf("Match allocates %v", n)
	}

	bad := AllowList{UASIDs: []string{"", "has space"}, ICAO: []string{"4CA2D", "GGGGGG"}, OperatorIDs: []string{"ok"}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("invalid allow-list accepted")
	}
	var fields []string
	for _, f := range err.(*Error).Fields {
		fields = append(fields, f.Field)
	}
	if want := []string{"uas_ids[0]", "uas_ids[1]", "icao[0]", "icao[1]"}; !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}
