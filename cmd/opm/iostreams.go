package main

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are where a command reads and writes. main uses the process's
// streams; tests pass buffers and say whether to pretend they are terminals.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // machine output (-o json)
	ErrOut io.Writer // human output, logs and errors

	InTTY, OutTTY, ErrTTY bool
}

// SystemStreams are stdin, stdout and stderr.
func SystemStreams() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

// TestStreams are buffers that are not terminals.
func TestStreams() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// colorEnabled reports whether output to a stream may use colour: only on a
// terminal, and never when NO_COLOR is set (https://no-color.org) or TERM
// is dumb.
func colorEnabled(tty bool) bool {
	if !tty {
		return false
	}
	if v, ok := os.LookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	return os.Getenv("TERM") != "dumb"
}
