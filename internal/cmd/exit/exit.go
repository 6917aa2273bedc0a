// Package exit holds opm's exit statuses and the error that carries one
// from a command to main.
package exit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Exit statuses.
const (
	OK          = 0
	Failed      = 1   // the command ran and found failing findings
	Usage       = 2   // bad flags or arguments, unreadable input, other I/O errors
	Interrupted = 130 // SIGINT (128+2)
	Terminated  = 143 // SIGTERM (128+15)
	// TimedOut is a run stopped by --timeout: GNU timeout's status, which
	// scripts already know.
	TimedOut = 124

	// UpstreamUsage is a usage error on the command paths upstream opm
	// v1.73.0 had (index, registry, alpha): there upstream's `index add`
	// gives 2 its own meaning (bundle image already present), so a usage
	// error must not look like it. 64 is sysexits.h's EX_USAGE.
	UpstreamUsage = 64
)

// Error carries an exit status from a command's RunE to main. Err is
// printed to stderr; a nil Err means the command has already said
// everything (a failed validation, whose report is the explanation).
type Error struct {
	Code int
	Err  error
	// Exact marks a status that keeps its number on every command path
	// (upstream's index add statuses 2 and 3), where a plain Usage status
	// becomes UpstreamUsage on upstream's paths.
	Exact bool
	// usage marks an error in how opm was called (Usagef), as opposed to
	// an I/O error that shares its status on opm's own commands.
	usage bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Findings ends a run whose report has been printed and that failed.
var Findings = &Error{Code: Failed}

// With is err with exit status code.
func With(code int, err error) error { return &Error{Code: code, Err: err} }

// Exactly is err with exit status code, kept as is on upstream's command
// paths (index add's 2 and 3 mean what upstream's meant).
func Exactly(code int, err error) error { return &Error{Code: code, Err: err, Exact: true} }

// Usagef is an error in how opm was called: exit status 2.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...), usage: true}
}

// Interrupt is the error of a run stopped by a signal: exit status 130.
func Interrupt() error {
	return &Error{Code: Interrupted, Err: errors.New("interrupted")}
}

// IfInterrupted is Interrupt when ctx was cancelled, else nil.
func IfInterrupted(ctx context.Context) error {
	if ctx.Err() != nil {
		return Interrupt()
	}
	return nil
}

// Code is the exit status of err (nil is OK; an error carrying no status
// is a usage or I/O error) and whether err still needs printing.
func Code(err error) (code int, print bool) {
	if err == nil {
		return OK, false
	}
	var ee *Error
	if errors.As(err, &ee) {
		return ee.Code, ee.Err != nil
	}
	return Usage, true
}

// Signalled is the cause of a run's context cancelled by a signal.
type Signalled struct{ Signal os.Signal }

func (s Signalled) Error() string { return "stopped by " + s.Signal.String() }

// Status is the exit status of a process stopped by the signal: 128 plus
// its number, as a shell reports it.
func (s Signalled) Status() int {
	if n, ok := s.Signal.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return Interrupted
}

// UsageOnUpstream is the status of err on upstream's command paths
// (docs/output.md): a usage error (Usagef, or an error cobra returned
// about flags, arguments or commands) is UpstreamUsage; an I/O error that
// opm's own commands give status Usage is Failed there, as upstream; Exact
// statuses and every other status are kept.
func UsageOnUpstream(err error) int {
	var ee *Error
	if !errors.As(err, &ee) {
		if err == nil {
			return OK
		}
		return UpstreamUsage
	}
	switch {
	case ee.Exact || ee.Code != Usage:
		return ee.Code
	case ee.usage:
		return UpstreamUsage
	}
	return Failed
}

// PartialError is the error of a run stopped (a signal, --timeout) after
// it wrote something: Wrote says what, in place of "nothing was written".
type PartialError struct {
	Wrote string
	Err   error
}

func (e *PartialError) Error() string { return e.Err.Error() }
func (e *PartialError) Unwrap() error { return e.Err }

// Partial is err of a run that wrote what wrote says before it stopped.
func Partial(err error, wrote string) error { return &PartialError{Wrote: wrote, Err: err} }

// WhatWasWritten is what a stopped run with error err wrote: the Wrote of
// a PartialError in err, else "nothing was written".
func WhatWasWritten(err error) string {
	var p *PartialError
	if errors.As(err, &p) && p.Wrote != "" {
		return p.Wrote
	}
	return "nothing was written"
}

// TimeoutError is the cause of a run's context when --timeout ends it.
type TimeoutError struct{ After time.Duration }

func (e TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s (--timeout)", e.After)
}
