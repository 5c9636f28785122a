package beastout_test

import (
	"fmt"

	"github.com/cuasd/cuasd/output/beastout"
)

// A DF11 all-call reply received at 12 MHz tick 0x1a (a byte that must be
// escaped) with signal byte 200, as Beast out sends it.
func ExampleAppendRecord() {
	b := beastout.AppendRecord(nil, '2', 0x1a, 200, []byte{0x5d, 0x40, 0x6b, 0x90, 0x8a, 0xd5, 0x50})
	fmt.Printf("% x\n", b)
	// Output: 1a 32 00 00 00 00 00 1a 1a c8 5d 40 6b 90 8a d5 50
}
