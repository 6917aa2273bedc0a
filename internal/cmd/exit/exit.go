// Package exit holds opm's exit statuses and the error that carries one
// from a command to main.
package exit

import (
	"context"
	"errors"
	"fmt"
)

// Exit statuses.
const (
	OK          = 0
	Failed      = 1 // the command ran and found failing findings
	Usage       = 2 // bad flags or arguments, unreadable input, other I/O errors
	Interrupted = 130
)

// Error carries an exit status from a command's RunE to main. Err is
// printed to stderr; a nil Err means the command has already said
// everything (a failed validation, whose report is the explanation).
type Error struct {
	Code int
	Err  error
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

// Usagef is an error in how opm was called: exit status 2.
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
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
