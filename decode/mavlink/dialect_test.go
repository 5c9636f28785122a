package mavlink

import "testing"

func TestLookup(t *testing.T) {
	byID := map[uint32]*MessageDef{}
	for i := range Messages() {
		byID[Messages()[i].ID] = &Messages()[i]
	}
	for id := uint32(0); id < 70000; id++ {
		if got, want := Lookup(id), byID[id]; got != want {
			t.Fatalf("Lookup(%d) = %v, want %v", id, got, want)
		}
	}
	if Lookup(1<<24-1) != nil {
		t.Error("Lookup(0xFFFFFF)")
	}
	if d := LookupName("GLOBAL_POSITION_INT"); d == nil || d.ID != 33 || d.Field("hdg") == nil || d.Field("nope") != nil {
		t.Errorf("LookupName: %+v", d)
	}
	for i := range Messages() {
		d := &Messages()[i]
		if i > 0 && Messages()[i-1].ID >= d.ID {
			t.Fatalf("not sorted at %d", d.ID)
		}
		end := 0
		for _, f := range d.Fields {
			end = max(end, int(f.Offset)+f.Len())
		}
		if end != int(d.Len) || d.BaseLen > d.Len {
			t.Errorf("%s: fields end at %d, Len %d BaseLen %d", d.Name, end, d.Len, d.BaseLen)
		}
	}
}

func TestEnumName(t *testing.T) {
	for _, tc := range []struct {
		enum string
		v    uint32
		want string
	}{
		{"MAV_TYPE", 2, "MAV_TYPE_QUADROTOR"},
		{"MAV_TYPE", 12, "MAV_TYPE_SUBMARINE"},
		{"MAV_AUTOPILOT", 3, "MAV_AUTOPILOT_ARDUPILOTMEGA"},
		{"COPTER_MODE", 6, "COPTER_MODE_RTL"},
		{"MAV_TYPE", 999, ""},
		{"NO_SUCH_ENUM", 0, ""},
	} {
		t.Run(tc.enum, func(t *testing.T) {
			if got := EnumName(tc.enum, tc.v); got != tc.want {
				t.Errorf("EnumName(%s, %d) = %q, want %q", tc.enum, tc.v, got, tc.want)
			}
		})
	}
}

func TestFieldType(t *testing.T) {
	if TypeFloat.String() != "float" || TypeChar.Size() != 1 || TypeDouble.Size() != 8 || FieldType(0).String() != "invalid" || FieldType(99).Size() != 0 {
		t.Error("FieldType names/sizes")
	}
}
