package main

import "flag"

// parseInterleaved parses fs over args, letting flags come before, between
// or after the positional arguments, which it returns in order. Errors,
// flag.ErrHelp included, are the FlagSet's.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
