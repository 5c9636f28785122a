package main

import (
	"context"
	"errors"
	"io"
)

// runVerify implements `cuasd verify`.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("verify: not implemented in this build")
}
