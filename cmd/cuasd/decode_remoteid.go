package main

import (
	"context"
	"errors"
	"io"
)

// runDecodeRemoteID implements `cuasd decode remoteid`.
func runDecodeRemoteID(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("decode remoteid: not implemented in this build")
}
