package droneclaim

// parseStatus reads the WarDragon status feed: serial_number, gps_data
// {latitude, longitude, altitude, gps_fix...} and system_stats.
func parseStatus(doc map[string]any, st *Status) error {
	var p parser
	st.Serial = p.str(doc, first(doc, "serial_number", "serial", "id"))
	if gps, ok := p.object(doc, "gps_data"); ok {
		st.Lat, st.Lon, st.HasPosition = p.latLon(gps, [2]string{"latitude", "longitude"}, [2]string{"lat", "lon"})
		st.AltM, st.HasAlt = p.num(gps, first(gps, "altitude", "alt"), -1000, 31767)
		fix, isBool := gps["gps_fix"].(bool)
		if !isBool {
			// gpsd's mode: 2 is a 2D fix, 3 a 3D fix.
			x, _ := p.num(gps, "gps_fix", 0, 3)
			fix = x >= 2
		}
		st.GPSFix = fix
	}
	if stats, ok := p.object(doc, "system_stats"); ok {
		st.CPUPercent, st.HasCPU = p.num(stats, "cpu_usage", 0, 100)
		st.TempC, st.HasTemp = p.num(stats, "temperature", -100, 200)
	}
	if p.err != nil {
		return p.err
	}
	if st.Serial == "" {
		return &Error{Reason: "no_identity", Field: "serial_number", Detail: "a status needs the kit's serial_number"}
	}
	return nil
}
