// Package validate holds opm's named validation rules for bundles and CSVs,
// the findings they produce, and the runner that applies them to many
// bundles at once.
package validate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Severity of a finding.
type Severity int

// Severities, most severe first.
const (
	Error Severity = iota
	Warning
	Info
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Info:
		return "info"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText writes the severity as its name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity reads "error", "warning" or "info".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "error":
		return Error, nil
	case "warning", "warn":
		return Warning, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown severity %q: use error, warning or info", s)
}

// Finding is one problem a rule found.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// File is relative to the bundle directory (or the file given to csv lint).
	File string `json:"file,omitempty"`
	// Line is where Field is in File, when known.
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// BundleReport is the findings for one bundle (or one CSV file).
type BundleReport struct {
	// Path is the argument the bundle was given as.
	Path string `json:"path"`
	// Name is the CSV name, when the CSV could be read.
	Name     string    `json:"name"`
	Findings []Finding `json:"findings"`
}

// Result is what one validation run found. It is the JSON document that
// `-o json` prints.
type Result struct {
	Passed  bool           `json:"passed"`
	Bundles []BundleReport `json:"bundles"`
}

// Count returns the number of findings of each severity.
func (r *Result) Count() (errors, warnings, infos int) {
	for _, b := range r.Bundles {
		for _, f := range b.Findings {
			switch f.Severity {
			case Error:
				errors++
			case Warning:
				warnings++
			default:
				infos++
			}
		}
	}
	return
}

// IsRootCause reports whether findings of rule id explain others (see
// Rule.RootCause).
func IsRootCause(id string) bool {
	r, ok := registry[id]
	return ok && r.RootCause
}

// Fails reports whether a finding of severity s fails a run that fails on
// failOn: failing on warnings also fails on errors.
func Fails(s, failOn Severity) bool { return s <= failOn }

// sortFindings orders findings by file, line, severity and rule, root
// causes (syntax errors) before the rest: the finding to fix first is the
// first one read.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := IsRootCause(a.Rule), IsRootCause(b.Rule); ra != rb {
			return ra
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Severity != b.Severity {
			return a.Severity < b.Severity
		}
		return a.Rule < b.Rule
	})
}

// childPath is the field path of key under parent. A key holding a dot or a
// bracket is quoted in brackets (spec["com.redhat.openshift.versions"]) so
// that it does not read as nesting; Document.LineOf resolves both forms.
func childPath(parent, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"") {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}
