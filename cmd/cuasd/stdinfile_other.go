//go:build !linux

package main

import "errors"

// memFile is Linux's (memfd); elsewhere a FILE flag of serve other than
// --config and --alerts does not read standard input.
func memFile(string, []byte) (string, error) {
	return "", errors.New("standard input (-) is read for this flag on Linux only; give a file")
}
