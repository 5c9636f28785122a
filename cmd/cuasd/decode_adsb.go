package main

import (
	"context"
	"errors"
	"io"
)

// runDecodeADSB implements `cuasd decode adsb`.
func runDecodeADSB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("decode adsb: not implemented in this build")
}
