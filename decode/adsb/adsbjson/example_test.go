package adsbjson_test

import (
	"encoding/json"
	"fmt"

	"github.com/cuasd/cuasd/decode/adsb/adsbjson"
)

// Decode an even/odd pair as the endpoint does.
func ExampleDecode() {
	even, odd := "8D40621D58C382D690C8AC2863A7", "8D40621D58C386435CC412692AD6"
	resp, problem := adsbjson.Decode(adsbjson.Request{Even: &even, Odd: &odd, Newest: "even"})
	if problem != nil {
		fmt.Println(problem.Status, problem.Detail)
		return
	}
	b, _ := json.Marshal(resp.Position)
	fmt.Println(string(b))
	fmt.Println(resp.Messages[0].ICAO, *resp.Messages[0].Altitude)
	// Output:
	// {"lat":52.2572021484375,"lon":3.91937255859375,"method":"cpr_global_airborne"}
	// 40621D 38000
}
