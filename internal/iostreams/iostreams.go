// Package iostreams holds where a command reads and writes: the streams,
// whether each is a terminal, whether colour is wanted, the lipgloss theme
// of human output and a one-line progress counter.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
)

// IOStreams are where a command reads and writes. main uses the process's
// streams; tests pass buffers and say whether to pretend they are terminals.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // machine output (-o json)
	ErrOut io.Writer // human output, logs and errors

	InTTY, OutTTY, ErrTTY bool

	// LookupEnv reads NO_COLOR and TERM; nil means os.LookupEnv. Tests
	// give a fake environment so that they can run in parallel.
	LookupEnv func(string) (string, bool)

	// ProgressEvery is how often progress is written at most when ErrOut
	// is not a terminal; 0 means DefaultPlainEvery. Tests shorten it.
	ProgressEvery time.Duration
}

// System are stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

// Test are buffers that are not terminals, with an empty environment.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	s = &IOStreams{In: in, Out: out, ErrOut: errOut,
		LookupEnv: func(string) (string, bool) { return "", false }}
	return s, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

func (s *IOStreams) lookupEnv(k string) (string, bool) {
	if s.LookupEnv == nil {
		return os.LookupEnv(k)
	}
	return s.LookupEnv(k)
}

// ColorEnabled reports whether output to a stream may use colour: only on a
// terminal, and never when NO_COLOR is set (https://no-color.org) or TERM
// is dumb.
func (s *IOStreams) ColorEnabled(tty bool) bool {
	if !tty {
		return false
	}
	if v, ok := s.lookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	term, _ := s.lookupEnv("TERM")
	return term != "dumb"
}

// ErrTheme styles human output on ErrOut.
func (s *IOStreams) ErrTheme() *Theme { return NewTheme(s.ErrOut, s.ColorEnabled(s.ErrTTY)) }

// OutTheme styles output on Out (listings the user asked for).
func (s *IOStreams) OutTheme() *Theme { return NewTheme(s.Out, s.ColorEnabled(s.OutTTY)) }
