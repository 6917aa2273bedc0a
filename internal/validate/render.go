package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/internal/printable"
)

// This file renders a *Result for people (text) and for programs (JSON).
// It knows nothing of terminals or of cobra: the caller passes the styling
// as plain string functions, so that colour can be switched off by giving
// none.

// Styles colour parts of the text report. A nil function leaves the text as
// it is; the zero Styles prints plain text.
type Styles struct {
	Error, Warning, Info func(string) string // a severity name
	Rule                 func(string) string // a rule id
	Location             func(string) string // file:line and field
	Hint                 func(string) string // the hint line
	Header               func(string) string // a bundle's path
	Passed, Failed       func(string) string // ✓ / ✗ marks and the verdict
	Dim                  func(string) string // secondary text (csv names, file headers)
}

func apply(f func(string) string, s string) string {
	if f == nil {
		return s
	}
	return f(s)
}

func (st Styles) severity(s Severity) string {
	name := fmt.Sprintf("%-7s", s.String())
	switch s {
	case Error:
		return apply(st.Error, name)
	case Warning:
		return apply(st.Warning, name)
	}
	return apply(st.Info, name)
}

// TextOptions tune WriteText.
type TextOptions struct {
	Styles Styles
	// FailOn is the severity the run failed on; the verdict mentions it
	// when it is not Error.
	FailOn Severity
	// Noun names what Result.Bundles holds: "bundle" (the default) or
	// "file" for csv lint.
	Noun string
	// Quiet leaves out the "✓ path" line of reports without findings.
	Quiet bool
}

// WriteText writes the human report: findings grouped by bundle and file,
// each with its severity, rule id, location, message and hint, then a
// summary line.
//
//	✗ operators/etcd/0.9.4 (etcdoperator.v0.9.4)
//	  manifests/etcdoperator.v0.9.4.clusterserviceversion.yaml
//	    error   csv-release-format  manifests/….yaml:12 spec.release
//	            release "01": a numeric identifier has a leading zero
//	            hint: write release: "1"
//	✓ operators/etcd/0.9.2 (etcdoperator.v0.9.2)
//	2 bundles, 1 error, 0 warnings, 0 infos — failed
func WriteText(w io.Writer, r *Result, opts TextOptions) error {
	var b strings.Builder
	for _, rep := range r.Bundles {
		writeReport(&b, rep, opts)
	}
	b.WriteString(Summary(r, opts.Noun, opts.FailOn, opts.Styles) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// TextWriter writes the same report as WriteText a piece at a time, as
// Stream hands out packages, so that findings show while the run goes on
// and nothing is kept once written. Close writes the summary line.
type TextWriter struct {
	w    io.Writer
	opts TextOptions

	bundles, errors, warnings, infos int
	passed                           bool
}

// NewTextWriter starts a text report on w.
func NewTextWriter(w io.Writer, opts TextOptions) *TextWriter {
	return &TextWriter{w: w, opts: opts, passed: true}
}

// Write writes the reports' blocks, in the order given; their findings
// must be sorted (as Stream's are).
func (t *TextWriter) Write(reports []BundleReport) error {
	var b strings.Builder
	for _, rep := range reports {
		writeReport(&b, rep, t.opts)
		t.bundles++
		for _, f := range rep.Findings {
			switch f.Severity {
			case Error:
				t.errors++
			case Warning:
				t.warnings++
			default:
				t.infos++
			}
			if Fails(f.Severity, t.opts.FailOn) {
				t.passed = false
			}
		}
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// Passed reports whether no finding written so far fails the run.
func (t *TextWriter) Passed() bool { return t.passed }

// Close writes the summary line of everything written.
func (t *TextWriter) Close() error {
	_, err := io.WriteString(t.w, summaryLine(t.bundles, t.errors, t.warnings, t.infos, t.passed, t.opts.Noun, t.opts.FailOn, t.opts.Styles)+"\n")
	return err
}

// writeReport writes one bundle's block of the text report.
func writeReport(b *strings.Builder, rep BundleReport, opts TextOptions) {
	st := opts.Styles
	rep.Path, rep.Name = printable.Name(rep.Path), printable.Name(rep.Name)
	if len(rep.Findings) == 0 {
		if !opts.Quiet {
			b.WriteString(apply(st.Passed, "✓") + " " + apply(st.Header, rep.Path) + nameSuffix(st, rep.Name) + "\n")
		}
		return
	}
	mark := apply(st.Passed, "✓")
	for _, f := range rep.Findings {
		if Fails(f.Severity, opts.FailOn) {
			mark = apply(st.Failed, "✗")
			break
		}
		mark = apply(st.Warning, "!")
	}
	b.WriteString(mark + " " + apply(st.Header, rep.Path) + nameSuffix(st, rep.Name) + "\n")
	file, first := "", true
	for _, f := range rep.Findings {
		if first || f.File != file {
			file, first = f.File, false
			// csv lint names the file itself: no header needed.
			if file != "" && file != rep.Path {
				b.WriteString("  " + apply(st.Dim, printable.Name(file)) + "\n")
			}
		}
		indent := "    "
		if f.File == "" || f.File == rep.Path {
			indent = "  "
		}
		writeFinding(b, st, indent, f)
	}
}

func nameSuffix(st Styles, name string) string {
	if name == "" {
		return ""
	}
	return " " + apply(st.Dim, "("+name+")")
}

func writeFinding(b *strings.Builder, st Styles, indent string, f Finding) {
	f.File, f.Field, f.Rule, f.Message, f.Hint = printable.Name(f.File), printable.Name(f.Field), printable.Name(f.Rule), printable.Text(f.Message), printable.Text(f.Hint)
	loc := f.File
	if loc != "" && f.Line > 0 {
		loc += fmt.Sprintf(":%d", f.Line)
	}
	if f.Field != "" {
		if loc != "" {
			loc += " "
		}
		loc += f.Field
	}
	b.WriteString(indent + st.severity(f.Severity) + " " + apply(st.Rule, f.Rule))
	if loc != "" {
		b.WriteString("  " + apply(st.Location, loc))
	}
	b.WriteString("\n")
	// Message and hint sit under the rule id, so a long message stays
	// readable and the location stays easy to pick out.
	pad := indent + strings.Repeat(" ", 8)
	for _, line := range strings.Split(strings.TrimRight(f.Message, "\n"), "\n") {
		b.WriteString(pad + line + "\n")
	}
	if f.Hint != "" {
		b.WriteString(pad + apply(st.Hint, "hint: "+f.Hint) + "\n")
	}
}

// Summary is the last line of the text report, such as
// "181 bundles, 12 errors, 40 warnings, 3 infos — failed".
func Summary(r *Result, noun string, failOn Severity, st Styles) string {
	e, w, i := r.Count()
	return summaryLine(len(r.Bundles), e, w, i, r.Passed, noun, failOn, st)
}

func summaryLine(bundles, e, w, i int, passed bool, noun string, failOn Severity, st Styles) string {
	if noun == "" {
		noun = "bundle"
	}
	s := fmt.Sprintf("%s, %s, %s, %s — ", plural(bundles, noun), plural(e, "error"), plural(w, "warning"), plural(i, "info"))
	verdict := apply(st.Passed, "passed")
	if !passed {
		verdict = apply(st.Failed, "failed")
	}
	s += verdict
	if failOn != Error {
		s += fmt.Sprintf(" (failing on %ss and above)", failOn)
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// jsonResult and its parts are the `-o json` document. Unlike Finding's own
// JSON tags, every key is always present (empty string or 0 when unknown),
// and findings is always an array, so consumers need no existence checks.
type jsonResult struct {
	Passed  bool         `json:"passed"`
	Bundles []jsonBundle `json:"bundles"`
}

type jsonBundle struct {
	Path     string        `json:"path"`
	Name     string        `json:"name"`
	Findings []jsonFinding `json:"findings"`
}

type jsonFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Field    string `json:"field"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
}

// WriteJSON writes r as the documented `-o json` document (docs/output.md),
// indented, with a trailing newline.
func WriteJSON(w io.Writer, r *Result) error {
	out := jsonResult{Passed: r.Passed, Bundles: make([]jsonBundle, 0, len(r.Bundles))}
	for _, rep := range r.Bundles {
		jb := jsonBundle{Path: rep.Path, Name: rep.Name, Findings: make([]jsonFinding, 0, len(rep.Findings))}
		for _, f := range rep.Findings {
			jb.Findings = append(jb.Findings, jsonFinding{
				Rule: f.Rule, Severity: f.Severity.String(), File: f.File, Line: f.Line,
				Field: f.Field, Message: f.Message, Hint: f.Hint,
			})
		}
		out.Bundles = append(out.Bundles, jb)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// NewResult builds a Result from reports made with Check (as `opm csv lint`
// does, one per file): it sorts each report's findings as Run does and sets
// Passed from failOn. Nil findings become empty.
func NewResult(reports []BundleReport, failOn Severity) *Result {
	res := &Result{Passed: true, Bundles: reports}
	if res.Bundles == nil {
		res.Bundles = []BundleReport{}
	}
	for i := range res.Bundles {
		if res.Bundles[i].Findings == nil {
			res.Bundles[i].Findings = []Finding{}
		}
		sortFindings(res.Bundles[i].Findings)
		for _, f := range res.Bundles[i].Findings {
			if Fails(f.Severity, failOn) {
				res.Passed = false
			}
		}
	}
	return res
}

// RuleInfo is one row of the rule catalog (`--list-rules -o json`).
type RuleInfo struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Scope    string `json:"scope"`
	// Set is the rule set (--select SET); every rule has one.
	Set string `json:"set"`
	// AlsoIn are the opt-in sets that run the rule too.
	AlsoIn []string `json:"alsoIn,omitempty"`
	What   string   `json:"what"`
	Why    string   `json:"why,omitempty"`
	Fix    string   `json:"fix,omitempty"`
}

// Catalog lists every registered rule, ordered by id.
func Catalog() []RuleInfo {
	rules := Rules()
	out := make([]RuleInfo, 0, len(rules))
	for _, r := range rules {
		set := r.Set
		if set == "" {
			set = SetDefault
		}
		out = append(out, RuleInfo{ID: r.ID, Severity: r.Severity.String(), Scope: r.Scope.String(), Set: set, AlsoIn: r.AlsoIn, What: r.What, Why: r.Why, Fix: r.Fix})
	}
	return out
}

// WriteCatalogText writes the rule catalog as aligned columns: id,
// severity, scope, set and what the rule checks.
func WriteCatalogText(w io.Writer, rules []RuleInfo, st Styles) error {
	idw := len("RULE")
	for _, r := range rules {
		idw = max(idw, len(r.ID))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-7s  %-7s  %-12s  %s\n", idw, "RULE", "SEVERITY", "SCOPE", "SET", "CHECKS")
	for _, r := range rules {
		sev, _ := ParseSeverity(r.Severity)
		set := strings.Join(append([]string{r.Set}, r.AlsoIn...), ",")
		fmt.Fprintf(&b, "%s  %s  %-7s  %-12s  %s\n", apply(st.Rule, fmt.Sprintf("%-*s", idw, r.ID)), st.severity(sev)+" ", r.Scope, set, r.What)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
