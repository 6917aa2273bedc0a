package fbc

import (
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/printable"
	"github.com/opmkit/opm/internal/validate"
)

// InvalidError is a catalog that does not validate: every error finding
// of Validate, each naming its file and line (when the catalog was loaded
// from files), the bundle or channel, the field and how to fix it.
type InvalidError struct {
	Findings []validate.Finding
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the catalog does not validate: %s", printable.Count(len(e.Findings), "problem", "problems"))
	for _, f := range e.Findings {
		b.WriteString("\n  ")
		if loc := findingLocation(f); loc != "" {
			b.WriteString(loc + ": ")
		}
		fmt.Fprintf(&b, "%s (%s)", f.Message, f.Rule)
		if f.Hint != "" {
			b.WriteString("; fix: " + f.Hint)
		}
	}
	return b.String()
}

func findingLocation(f validate.Finding) string {
	loc := f.File
	if loc != "" && f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, f.Line)
	}
	if f.Field != "" {
		if loc != "" {
			loc += " "
		}
		loc += f.Field
	}
	return loc
}

// Check validates the catalog and returns an *InvalidError listing every
// error finding, or nil when there is none. Warnings are not errors.
func Check(c *Catalog) error {
	var bad []validate.Finding
	for _, f := range Validate(c) {
		if f.Severity == validate.Error {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &InvalidError{Findings: bad}
}

// Checks is Check a package at a time: Add each package, then Err is what
// Check returns for the whole catalog.
type Checks struct {
	bad []validate.Finding
}

// Add checks one package (or more, whole).
func (cs *Checks) Add(c *Catalog) {
	for _, f := range Validate(c) {
		if f.Severity == validate.Error {
			cs.bad = append(cs.bad, f)
		}
	}
}

// Err is nil when no package added had an error finding, else an
// *InvalidError listing them all, in Validate's order.
func (cs *Checks) Err() error {
	if len(cs.bad) == 0 {
		return nil
	}
	sortFindings(cs.bad)
	return &InvalidError{Findings: cs.bad}
}
