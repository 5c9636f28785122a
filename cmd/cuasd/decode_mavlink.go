package main

import (
	"context"
	"errors"
	"io"
)

// runDecodeMAVLink implements `cuasd decode mavlink`.
func runDecodeMAVLink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("decode mavlink: not implemented in this build")
}
