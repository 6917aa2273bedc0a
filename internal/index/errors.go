package index

import (
	"errors"
	"strings"
)

// ErrorKind says what went wrong while adding bundles.
type ErrorKind string

// Kinds of Add errors. Each *Error names the package, bundle and channel
// concerned, and the fix.
const (
	KindInvalidBundle    ErrorKind = "invalid-bundle"     // the bundle cannot go into an index (no annotations, no CSV name, bad CRD name, ...)
	KindBadVersion       ErrorKind = "bad-version"        // spec.version is not semver, or spec.release is malformed
	KindReplacesMissing  ErrorKind = "replaces-missing"   // spec.replaces names a bundle that is not in the package
	KindCycle            ErrorKind = "cycle"              // the upgrade graph would loop
	KindVersionExists    ErrorKind = "version-exists"     // another bundle of the package has the same version (and release)
	KindCSVExists        ErrorKind = "csv-exists"         // a bundle with this CSV name is already in the index
	KindBundlePathExists ErrorKind = "bundle-path-exists" // a bundle with this path/image is already in the index
	KindTwoHeads         ErrorKind = "two-heads"          // a channel would have two heads
	KindPrune            ErrorKind = "prune"              // a bundle would not be reachable from its channel head
	KindUnsupported      ErrorKind = "unsupported"        // a feature opm does not handle yet (substitutesFor, deprecated bundles)
	KindOverwrite        ErrorKind = "overwrite"          // --overwrite-latest cannot replace the bundle
)

// Error is one reason an Add refused a bundle.
type Error struct {
	Kind    ErrorKind
	Package string
	Bundle  string // CSV name (or the bundle path when the name is unknown)
	Channel string
	Msg     string
	Fix     string
	// Blame are the bundles of this Add that cause the error; --permissive
	// skips them. Empty when the error comes from the database itself.
	Blame []string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	var where []string
	if e.Package != "" {
		where = append(where, "package "+e.Package)
	}
	if e.Bundle != "" {
		where = append(where, "bundle "+e.Bundle)
	}
	if e.Channel != "" {
		where = append(where, "channel "+e.Channel)
	}
	if len(where) > 0 {
		b.WriteString(strings.Join(where, ", "))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	if e.Fix != "" {
		b.WriteString(" (fix: ")
		b.WriteString(e.Fix)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches an *Error of the same kind used as a sentinel (ErrCycle, ...).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Package == "" && t.Bundle == "" && t.Kind == e.Kind
}

// Sentinels for errors.Is.
var (
	ErrInvalidBundle    = &Error{Kind: KindInvalidBundle}
	ErrBadVersion       = &Error{Kind: KindBadVersion}
	ErrReplacesMissing  = &Error{Kind: KindReplacesMissing}
	ErrCycle            = &Error{Kind: KindCycle}
	ErrVersionExists    = &Error{Kind: KindVersionExists}
	ErrCSVExists        = &Error{Kind: KindCSVExists}
	ErrBundlePathExists = &Error{Kind: KindBundlePathExists}
	ErrTwoHeads         = &Error{Kind: KindTwoHeads}
	ErrPrune            = &Error{Kind: KindPrune}
	ErrUnsupported      = &Error{Kind: KindUnsupported}
	ErrOverwrite        = &Error{Kind: KindOverwrite}
)

// ExitCode maps an Add error to upstream opm's exit codes: 2 when a bundle
// path (image) is already in the index, 3 when its package and CSV name are,
// 1 for any other error, 0 for nil.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrBundlePathExists):
		return 2
	case errors.Is(err, ErrCSVExists):
		return 3
	}
	return 1
}

// Errors splits an error from Add into its *Error parts (and any others).
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	return []error{err}
}
