// Command dump writes the merged cuasd OpenAPI document (the YAML fragments
// of httpapi/openapi joined as /openapi.json serves them) to the file named
// by its one argument, so an independent linter can read it
// (`make lint-openapi`, issue 24).
package main

import (
	"fmt"
	"os"

	"github.com/cuasd/cuasd/httpapi"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dump FILE")
		os.Exit(2)
	}
	b, err := httpapi.OpenAPIJSON("/api/cuas")
	if err == nil {
		err = os.WriteFile(os.Args[1], append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}
