package alert_test

import (
	"fmt"

	"github.com/cuasd/cuasd/output/alert"
)

// A misspelt key is refused with the file, line and key, so that a rule
// never silently stops firing.
func ExampleParse() {
	_, err := alert.Parse("alerts.yaml", []byte(`sinks:
  - name: hook
    webhook: https://example.org/cuas
rules:
  - name: demo-breach
    zones: [demo-site]
    cooldwn: 60s
    sinks: [hook]
`))
	fmt.Println(err)
	// Output:
	// alerts alerts.yaml:7: rules[0].cooldwn: unknown key "cooldwn" (known: breach, classes, cooldown, min_decision, min_lambda, name, protocols, sinks, swarm_min, verification, zones)
}
