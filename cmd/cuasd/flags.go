package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

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

// newFlagSet is the FlagSet of one command. Its usage text is synopsis
// (the "Usage:" lines and any explanation) followed by the flags. When args
// ask for help (-h, -help, --help) the usage goes to stdout, and the command
// returns flag.ErrHelp, which run turns into exit status 0; otherwise
// errors and usage go to stderr.
func newFlagSet(name, synopsis string, args []string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if wantsHelp(args) {
		fs.SetOutput(stdout)
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), strings.TrimRight(synopsis, "\n")+"\n")
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(fs.Output(), "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// printHelp writes text for a command that has no flags of its own (such
// as `cuasd decode` or `cuasd token`) and returns flag.ErrHelp.
func printHelp(w io.Writer, text string) error {
	fmt.Fprint(w, strings.TrimRight(text, "\n")+"\n")
	return flag.ErrHelp
}
